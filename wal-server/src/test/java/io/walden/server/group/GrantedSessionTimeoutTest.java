package io.walden.server.group;

import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A member reports, and bases its bounds on, the session timeout ZooKeeper granted, not the one it asked for: an
 * ensemble whose tick is 3 s grants no less than 6 s (two ticks) to a member asking for 2 s.
 */
@Timeout(60)
class GrantedSessionTimeoutTest {
    @TempDir
    Path work;

    @Test
    void aMemberReportsTheTimeoutZooKeeperGrantedBesideTheOneItAskedFor() throws Exception {
        InstanceSpec spec = new InstanceSpec(work.resolve("zk").toFile(), -1, -1, -1, true, -1, 3000, -1,
                Map.of("minSessionTimeout", "6000"));
        try (TestingServer zk = new TestingServer(spec, true);
             GroupCoordinator member = new GroupCoordinator(CoordinatorUri.parse("zk://" + zk.getConnectString() + "/walden/t"),
                     "a", 2000, state -> { })) {
            member.start(new Member("a", "127.0.0.1:1", "127.0.0.1:2", Member.State.STARTING, 0, 0), 20_000);

            assertThat(member.sessionTimeoutMs()).as("granted").isEqualTo(6000);
            assertThat(member.requestedSessionTimeoutMs()).isEqualTo(2000);
            Map<String, Object> status = GroupStatus.json(member, "a", Member.State.STARTING, null, Map.of(), null, 0, 0);
            assertThat(status).containsEntry("session_timeout_ms", 6000).containsEntry("requested_session_timeout_ms", 2000);
        }
    }
}
