package io.walden.server.http;

import io.walden.server.WaldenServer;
import io.walden.server.config.ServerConfig;
import io.walden.server.contract.ContractCheckedClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A query parameter an endpoint does not read is refused, naming it and the known ones (docs/http-api.md, "Errors"):
 * {@code ?durabilty=off} must not be stored at the default level as if it were not there.
 */
@Timeout(60)
class UnknownParameterTest {
    @TempDir
    Path dir;
    private WaldenServer server;
    private final HttpClient http = ContractCheckedClient.create();

    @BeforeEach
    void start() throws Exception {
        server = new WaldenServer(ServerConfig.load(null, Map.of("data-dir", dir.toString(), "http", "127.0.0.1:0",
                "replication-listen", "none", "durability", "local"))).start();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private HttpResponse<String> send(String method, String target) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.boundAddress().getPort() + target))
                .method(method, HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aMisspeltParameterOfAnAppendIsRefusedNamingTheKnownOnesAndNothingIsWritten() throws Exception {
        long end = server.wal().insertLsn();
        HttpResponse<String> r = send("POST", "/v1/records?durabilty=off");
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.body()).contains("bad_parameter").contains("'durabilty'").contains("compression, durability, type");
        assertThat(server.wal().insertLsn()).as("nothing appended").isEqualTo(end);
        assertThat(send("POST", "/v1/records?durability=off").statusCode()).isEqualTo(200);
    }

    @Test
    void everyEndpointRefusesParametersItDoesNotRead() throws Exception {
        assertThat(send("GET", "/v1/records?form=0/0").body()).contains("'form'").contains("from");
        assertThat(send("POST", "/v1/records/batch?durability=on&limt=2").body()).contains("'limt'");
        assertThat(send("GET", "/admin/status?verbose=1").statusCode()).isEqualTo(400);
        assertThat(send("POST", "/admin/checkpoint?lns=0/40").body()).contains("'lns'").contains("known: lsn");
        assertThat(send("GET", "/v1/cursors?all=1").body()).contains("takes none");
    }

    @Test
    void aPercentEncodedNameIsTheParameterItEncodesAsQueryStringsAreDecoded() throws Exception {
        HttpResponse<String> on = send("POST", "/v1/records?dur%61bility=on&%74ype=7");
        assertThat(on.statusCode()).as(on.body()).isEqualTo(200);
        assertThat(on.body()).as("read, never the default level (local)").contains("\"durability\":\"on\"");
        HttpResponse<String> read = send("GET", "/v1/records?from%5Ftime=2020-01-01T00:00:00Z&lim%69t=1");
        assertThat(read.statusCode()).as(read.body()).isEqualTo(200);
        assertThat(read.body()).contains("\"type\":7");
        HttpResponse<String> misspelt = send("GET", "/v1/records?fr%6Fm_tim=2020-01-01T00:00:00Z");
        assertThat(misspelt.statusCode()).isEqualTo(400);
        assertThat(misspelt.body()).as("named as decoded").contains("'from_tim'");
    }

    @Test
    void probesMayAddParameters() throws Exception {
        assertThat(send("GET", "/health?from=lb").statusCode()).isEqualTo(200);
        assertThat(send("GET", "/ready?check=1").statusCode()).isEqualTo(200);
        assertThat(send("GET", "/metrics?name[]=walden_lsn").statusCode()).isEqualTo(200);
    }
}
