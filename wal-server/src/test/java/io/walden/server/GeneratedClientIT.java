package io.walden.server;

import io.walden.client.ApiClient;
import io.walden.client.ApiException;
import io.walden.client.api.AdminApi;
import io.walden.client.api.CursorsApi;
import io.walden.client.api.DataApi;
import io.walden.client.api.LogsApi;
import io.walden.client.model.Appended;
import io.walden.client.model.BatchAppended;
import io.walden.client.model.Cursor;
import io.walden.client.model.CursorPosition;
import io.walden.client.model.Durability;
import io.walden.client.model.LogChange;
import io.walden.client.model.LogCreation;
import io.walden.client.model.LogDescription;
import io.walden.client.model.LogSettings;
import io.walden.client.model.LogSummary;
import io.walden.client.model.Record;
import io.walden.client.model.RecordPage;
import io.walden.client.model.Status;
import io.walden.core.TestLogs;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The Java client openapi-generator builds from the OpenAPI document at every build (wal-server's pom; nobody here
 * wrote or edited it) drives a walden.jar process: what the document promises, a client generated from it can do.
 *
 * <p>Not here: {@code GET /v1/records/stream}. Its NDJSON body never ends, and the generator can only read a body
 * whole (its {@code stream()} returns one String once the server has closed it); the document says so in the stream's
 * schema, and ServerIT and BinaryRecordsIT read streams as they come.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class GeneratedClientIT {
    private static final String TOKEN = "generated-client-token";

    @TempDir
    static Path work;
    private static ServerProcess server;
    private static ApiClient client;

    @BeforeAll
    static void start() throws Exception {
        server = ServerProcess.start(work, work.resolve("log"), ServerProcess.freePort(), "--auth-token", TOKEN,
                "--durability", "local", "--replication-listen", "none");
        client = clientWith(TOKEN);
    }

    @AfterAll
    static void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    private static ApiClient clientWith(String token) {
        ApiClient c = new ApiClient().setBasePath("http://127.0.0.1:" + server.port).setConnectTimeout(5_000)
                .setReadTimeout(30_000);
        if (token != null) {
            c.setBearerToken(token);
        }
        return c;
    }

    private static File file(byte[] bytes) throws Exception {
        Path f = Files.createTempFile(work, "body", ".bin");
        Files.write(f, bytes);
        return f.toFile();
    }

    /** The batch body the document describes: each record a 4-byte big-endian length, then its payload. */
    private static File batch(String... payloads) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        for (String p : payloads) {
            byte[] b = p.getBytes(StandardCharsets.UTF_8);
            out.writeInt(b.length);
            out.write(b);
        }
        return file(bytes.toByteArray());
    }

    private static String text(Record r) {
        return new String(Base64.getDecoder().decode(r.getData()), StandardCharsets.UTF_8);
    }

    @Test
    void appendsAndBatchesReadBackInOrder() throws Exception {
        DataApi data = new DataApi(client);
        Appended one = data.append(file("first".getBytes(StandardCharsets.UTF_8)), Durability.LOCAL, 7, null);
        BatchAppended many = data.appendBatch(batch("second", "third"), Durability.LOCAL, 8, null);

        assertThat(one.getDurability()).isEqualTo(Durability.LOCAL);
        assertThat(many.getLsns()).hasSize(2);
        RecordPage page = data.read(one.getLsn(), null, null, null, 10, null);
        assertThat(page.getRecords()).extracting(GeneratedClientIT::text).containsExactly("first", "second", "third");
        assertThat(page.getRecords()).extracting(Record::getType).containsExactly(7, 8, 8);
        assertThat(page.getRecords()).extracting(Record::getLsn)
                .containsExactly(one.getLsn(), many.getLsns().get(0), many.getLsns().get(1));
    }

    @Test
    void aReadFromATimeStartsAtTheFirstRecordAppendedAtOrAfterIt() throws Exception {
        DataApi data = new DataApi(client);
        data.append(file("before".getBytes(StandardCharsets.UTF_8)), null, null, null);
        OffsetDateTime since = OffsetDateTime.ofInstant(TestLogs.timeBetweenAppends(), ZoneOffset.UTC);
        Appended after = data.append(file("after".getBytes(StandardCharsets.UTF_8)), null, null, null);

        RecordPage page = data.read(null, since, null, null, 10, null);
        assertThat(page.getRecords()).extracting(Record::getLsn).containsExactly(after.getLsn());
        assertThat(page.getRecords().get(0).getTime()).isAfterOrEqualTo(since);
    }

    @Test
    void aLongPollReturnsTheRecordAppendedWhileItWaits() throws Exception {
        DataApi data = new DataApi(client);
        String end = new AdminApi(client).status().getInsertLsn();
        CompletableFuture<RecordPage> poll = CompletableFuture.supplyAsync(() -> {
            try {
                return data.read(end, null, null, null, 10, 20_000);
            } catch (ApiException e) {
                throw new IllegalStateException(e);
            }
        });
        assertThatThrownBy(() -> poll.get(300, TimeUnit.MILLISECONDS)).as("nothing to return yet: the read waits")
                .isInstanceOf(TimeoutException.class);
        data.append(file("awaited".getBytes(StandardCharsets.UTF_8)), null, null, null);

        RecordPage page = poll.get(20, TimeUnit.SECONDS);
        assertThat(page.getRecords()).extracting(GeneratedClientIT::text).containsExactly("awaited");
    }

    @Test
    void aCursorIsSetReadFromListedAndDeleted() throws Exception {
        DataApi data = new DataApi(client);
        CursorsApi cursors = new CursorsApi(client);
        String first = data.append(file("c1".getBytes(StandardCharsets.UTF_8)), null, null, null).getLsn();
        String second = data.append(file("c2".getBytes(StandardCharsets.UTF_8)), null, null, null).getLsn();

        Cursor set = cursors.setCursor("generated", new CursorPosition().lsn(second));
        assertThat(set.getLsn()).isEqualTo(second);
        assertThat(cursors.getCursor("generated").getLsn()).isEqualTo(second);
        assertThat(cursors.listCursors().getCursors()).extracting(Cursor::getName).contains("generated");
        List<Record> fromCursor = data.read(null, null, "generated", null, 10, null).getRecords();
        assertThat(fromCursor).extracting(Record::getLsn).startsWith(second).doesNotContain(first);

        cursors.deleteCursor("generated");
        assertThatThrownBy(() -> cursors.getCursor("generated"))
                .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.getCode()).isEqualTo(404));
    }

    @Test
    void aNamedLogIsCreatedAppendedToReadChangedAndDeleted() throws Exception {
        LogsApi logs = new LogsApi(client);
        DataApi data = new DataApi(client);
        LogDescription created = logs.createLog(new LogCreation().name("generated")
                .settings(new LogSettings().retentionTime("7d")));
        assertThat(created.getSettings().getRetentionTime()).isEqualTo("7d");

        Appended one = data.appendToLog("generated", file("in generated".getBytes(StandardCharsets.UTF_8)), null, null, null);
        RecordPage page = data.readLog("generated", one.getLsn(), null, null, null, 10, null);
        assertThat(page.getRecords()).extracting(GeneratedClientIT::text).containsExactly("in generated");
        assertThat(logs.listLogs().getLogs()).extracting(LogSummary::getName).contains("default", "generated");

        LogDescription changed = logs.changeLog("generated", new LogChange().settings(new LogSettings().retentionBytes("1GiB")));
        assertThat(changed.getSettings().getRetentionBytes()).isEqualTo("1GiB");
        logs.deleteLog("generated", null);
        assertThatThrownBy(() -> logs.describeLog("generated"))
                .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.getCode()).isEqualTo(404));
    }

    @Test
    void statusProbesAndSegmentsDescribeTheServer() throws Exception {
        AdminApi admin = new AdminApi(client);
        Status status = admin.status();

        assertThat(status.getRole()).isEqualTo(Status.RoleEnum.PRIMARY);
        assertThat(status.getVersion()).isNotBlank();
        assertThat(admin.health().getStatus()).isNotNull();
        assertThat(admin.ready()).isNotNull();
        assertThat(admin.segments().getSegments()).isNotEmpty();
        assertThat(admin.metrics()).contains("walden_");
    }

    @Test
    void refusalsArriveAsApiExceptionsWithTheDocumentedErrorBody() throws Exception {
        DataApi data = new DataApi(client);
        DataApi stranger = new DataApi(clientWith(null));

        assertThatThrownBy(() -> data.read("not-an-lsn", null, null, null, null, null))
                .isInstanceOfSatisfying(ApiException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(400);
                    assertThat(e.getResponseBody()).contains("\"error\"");
                });
        assertThatThrownBy(() -> stranger.append(file("x".getBytes(StandardCharsets.UTF_8)), null, null, null))
                .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.getCode()).isEqualTo(401));
    }
}
