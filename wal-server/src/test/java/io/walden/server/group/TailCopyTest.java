package io.walden.server.group;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.walden.core.Durability;
import io.walden.core.Wal;
import io.walden.server.WaldenServer;
import io.walden.server.config.ServerConfig;
import io.walden.server.logs.LogCatalog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A copy of a tail that the other member refuses changes nothing in this member's log and says why at WARN, naming what
 * an operator sets when it is the token (docs/operations.md, "When no member holds every log"). The other member is a
 * real server over HTTP that requires a token; it is in no group, so a request past its token gate is refused as well.
 */
@Timeout(60)
class TailCopyTest {
    private static final String TOKEN = "group-token";

    @TempDir
    Path dir;
    private WaldenServer other;
    private final ListAppender<ILoggingEvent> warnings = new ListAppender<>();
    private final Logger logger = (Logger) LoggerFactory.getLogger(TailCopy.class);

    @BeforeEach
    void start() throws Exception {
        other = new WaldenServer(ServerConfig.load(null, Map.of("data-dir", dir.resolve("other").toString(),
                "http", "127.0.0.1:0", "replication-listen", "none", "durability", "local", "auth-token", TOKEN))).start();
        warnings.start();
        logger.addAppender(warnings);
    }

    @AfterEach
    void stop() {
        logger.detachAppender(warnings);
        other.close();
    }

    @Test
    void aRefusedCopyChangesNothingAndSaysWhyNamingTheTokenEveryMemberNeeds() throws Exception {
        assertThat(copyFromTheOther(null)).as("copied without the group's token").isFalse();
        assertThat(lastWarning()).contains("answered 401").contains("set the same admin --auth-token on every member");

        assertThat(copyFromTheOther(TOKEN)).as("copied from a server in no group").isFalse();
        assertThat(lastWarning()).as("the token passed: the member refused for what it is")
                .contains("answered 409").contains("not_coordinated");
    }

    /** One copy of {@code default}'s tail past this member's end, from the other server; checks nothing changed here. */
    private boolean copyFromTheOther(String token) throws Exception {
        Map<String, String> settings = new HashMap<>(Map.of("data-dir", dir.resolve("member-" + token).toString(),
                "http", "127.0.0.1:0", "replication-listen", "none"));
        if (token != null) {
            settings.put("auth-token", token);
        }
        ServerConfig config = ServerConfig.load(null, settings);
        try (Wal wal = Wal.open(config.walConfig());
             LogCatalog logs = LogCatalog.open(config, wal, wal.config().archive(), new SimpleMeterRegistry())) {
            wal.append("mine".getBytes(StandardCharsets.UTF_8), Durability.LOCAL);
            long end = wal.insertLsn();
            Member donor = new Member("a", "127.0.0.1:" + other.boundAddress().getPort(), "127.0.0.1:1",
                    Member.State.LOOKING, 1, end + 4096);
            boolean copied = new TailCopy(config, wal, logs).copy(new ElectionRule.CatchUp("b",
                    List.of(new ElectionRule.Tail("default", 0, "a", end, end + 4096))), Map.of("a", donor));
            assertThat(wal.insertLsn()).as("this member's log after a refused copy").isEqualTo(end);
            return copied;
        }
    }

    private String lastWarning() {
        List<ILoggingEvent> events = warnings.list;
        assertThat(events).isNotEmpty();
        ILoggingEvent last = events.get(events.size() - 1);
        assertThat(last.getLevel()).isEqualTo(Level.WARN);
        return last.getFormattedMessage();
    }
}
