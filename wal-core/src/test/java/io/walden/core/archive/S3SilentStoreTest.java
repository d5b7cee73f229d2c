package io.walden.core.archive;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A store that accepts connections, reads every request and never answers (a hung proxy, a wedged server): the
 * archiver's calls must give up on their own, as its one thread also applies the cap that blocks and releases appends.
 */
class S3SilentStoreTest {
    private static final Duration READ_TIMEOUT = Duration.ofMillis(500);

    @TempDir
    Path dir;
    private ServerSocket silent;
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();

    @BeforeEach
    void startASilentStore() throws IOException {
        S3Server.useDefaultChains();
        silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(() -> {
            try {
                while (true) {
                    Socket s = silent.accept();
                    accepted.add(s);
                    Thread reader = new Thread(() -> drain(s), "silent-store-reader");
                    reader.setDaemon(true);
                    reader.start();
                }
            } catch (IOException closed) {
                // the test is over
            }
        }, "silent-store");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    @AfterEach
    void stop() throws IOException {
        silent.close();
        for (Socket s : accepted) {
            s.close();
        }
    }

    @Test
    void aPutToAStoreThatNeverAnswersFailsAfterItsTriesReadTimeoutsNotNever() throws Exception {
        Path file = dir.resolve("segment");
        Files.write(file, new byte[4096]);
        URI endpoint = URI.create("http://127.0.0.1:" + silent.getLocalPort());
        try (S3ArchiveTarget target = new S3ArchiveTarget(URI.create("s3://bucket/logs"), endpoint, READ_TIMEOUT)) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> target.put("a.wal", file, 4096)).isInstanceOf(IOException.class)
                    .hasMessageContaining("could not archive a.wal");
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            // At least one silent read timed out, and the call ended well before even one read at the SDK's default
            // (30 s) would have: four tries of half a second, their pauses and the SDK's first-call set-up (class
            // loading, the credential chain: seconds on a loaded machine) take less than 20 s.
            assertThat(took).isBetween(READ_TIMEOUT, Duration.ofSeconds(20));
            assertThat(accepted).isNotEmpty();
        }
    }

    /** Reads whatever a client sends (so its writes never block) and answers nothing. */
    private static void drain(Socket s) {
        byte[] buffer = new byte[8192];
        try (InputStream in = s.getInputStream()) {
            while (in.read(buffer) >= 0) {
                // discarded
            }
        } catch (IOException closed) {
            // the client gave up, or the test closed it
        }
    }
}
