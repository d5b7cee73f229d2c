package io.walden.core.archive;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Stores that accept connections and then stop (a hung proxy, a wedged server, a link that stops moving): the
 * archiver's calls must give up on their own, as its one thread also applies the cap that blocks and releases appends.
 */
class S3SilentStoreTest {
    private static final Duration READ_TIMEOUT = Duration.ofMillis(500);

    @TempDir
    Path dir;
    private ServerSocket silent;
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();

    @BeforeEach
    void useTheDefaultChains() {
        S3Server.useDefaultChains();
    }

    /** A store on a free port whose every connection {@code behaviour} serves, on a thread of its own. */
    private URI startStore(Consumer<Socket> behaviour) throws IOException {
        silent = new ServerSocket();
        // A small receive window: a store that stops reading then stalls the client's writes after a few hundred KiB
        // whatever the machine's TCP buffer settings (accepted sockets inherit it).
        silent.setReceiveBufferSize(64 << 10);
        silent.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
        Thread acceptor = new Thread(() -> {
            try {
                while (true) {
                    Socket s = silent.accept();
                    accepted.add(s);
                    Thread reader = new Thread(() -> behaviour.accept(s), "silent-store-connection");
                    reader.setDaemon(true);
                    reader.start();
                }
            } catch (IOException closed) {
                // the test is over
            }
        }, "silent-store");
        acceptor.setDaemon(true);
        acceptor.start();
        return URI.create("http://127.0.0.1:" + silent.getLocalPort());
    }

    @AfterEach
    void stop() throws IOException {
        if (silent == null) {
            return;
        }
        silent.close();
        for (Socket s : accepted) {
            s.close();
        }
    }

    @Test
    void aPutToAStoreThatNeverAnswersFailsAfterItsTriesReadTimeoutsNotNever() throws Exception {
        Path file = dir.resolve("segment");
        Files.write(file, new byte[4096]);
        URI endpoint = startStore(S3SilentStoreTest::drain);
        S3ArchiveTarget.Limits limits = new S3ArchiveTarget.Limits(READ_TIMEOUT,
                S3ArchiveTarget.Limits.DEFAULT.uploadMargin(), S3ArchiveTarget.Limits.DEFAULT.slowestUploadBytesPerSecond());
        try (S3ArchiveTarget target = new S3ArchiveTarget(URI.create("s3://bucket/logs"), endpoint, limits)) {
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

    /**
     * The store takes an upload's head (and says "100 Continue" if asked) and then reads no more: the client's writes
     * of the body fill the sockets' buffers and block, which no socket timeout of {@code HttpURLConnection} covers.
     * The read timeout here is the default 30 s, so only the upload attempt's bound can end the call in time.
     */
    @Test
    void aPutWhoseBodyTheStoreStopsReadingFailsAfterItsTriesUploadBoundsNotNever() throws Exception {
        int length = 32 << 20; // well past what loopback's send and receive buffers hold
        Path file = dir.resolve("segment");
        Files.write(file, new byte[length]);
        URI endpoint = startStore(S3SilentStoreTest::takeTheHeadThenStopReading);
        Duration margin = Duration.ofMillis(500);
        long fast = 1L << 30; // 32 MiB at 1 GiB/s: 31 ms beyond the margin per attempt
        S3ArchiveTarget.Limits limits = new S3ArchiveTarget.Limits(S3ArchiveTarget.Limits.DEFAULT.read(), margin, fast);
        try (S3ArchiveTarget target = new S3ArchiveTarget(URI.create("s3://bucket/logs"), endpoint, limits)) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> target.put("a.wal", file, length)).isInstanceOf(IOException.class)
                    .hasMessageContaining("could not archive a.wal");
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            // At least one attempt ran to its bound, and the call ended before a single silent read at the default
            // (30 s) could have ended it: a few attempts of about half a second, their pauses and the first call's
            // set-up take less than 20 s.
            assertThat(took).isBetween(limits.uploadAttempt(length), Duration.ofSeconds(20));
            assertThat(accepted).isNotEmpty();
        }
    }

    @Test
    void anUploadAttemptIsBoundedByItsSizeAtTheSlowestRateNotByAFixedTime() {
        S3ArchiveTarget.Limits limits = S3ArchiveTarget.Limits.DEFAULT;
        assertThat(limits.uploadAttempt(0)).isEqualTo(Duration.ofSeconds(30));
        assertThat(limits.uploadAttempt(64L << 20)).as("a 64 MiB segment at 2 Mbit/s").isEqualTo(Duration.ofSeconds(30 + 256));
    }

    /** Reads a request's head, answers "100 Continue" if the client waits for it, then holds the socket unread. */
    private static void takeTheHeadThenStopReading(Socket s) {
        try {
            InputStream in = s.getInputStream();
            StringBuilder head = new StringBuilder();
            while (!head.toString().endsWith("\r\n\r\n")) {
                int b = in.read();
                if (b < 0) {
                    return;
                }
                head.append((char) b);
            }
            if (head.toString().toLowerCase(Locale.ROOT).contains("expect: 100-continue")) {
                OutputStream out = s.getOutputStream();
                out.write("HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
            }
            while (!s.isClosed()) {
                Thread.sleep(50);
            }
        } catch (IOException | InterruptedException closed) {
            // the client gave up, or the test closed it
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
