package io.walden.server.cluster;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class ClusterAddressTest {
    @Test
    void theLastElementOfThePathNamesTheClusterAndTheOthersTheChroot() {
        ClusterAddress address = ClusterAddress.parse("zk://zk1:2181,zk2:2181/walden/prod");

        assertThat(address.connectString()).isEqualTo("zk1:2181,zk2:2181");
        assertThat(address.chroot()).isEqualTo("/walden");
        assertThat(address.clusterName()).isEqualTo("prod");
        assertThat(address.helixZkAddress()).isEqualTo("zk1:2181,zk2:2181/walden");
        assertThat(address.clusterPath()).isEqualTo("/walden/prod");
        assertThat(address).hasToString("zk://zk1:2181,zk2:2181/walden/prod");
    }

    @Test
    void aPathOfOneElementIsAClusterAtTheRootOfTheEnsemble() {
        ClusterAddress address = ClusterAddress.parse("zk://zk1:2181/prod");

        assertThat(address.chroot()).isEmpty();
        assertThat(address.helixZkAddress()).isEqualTo("zk1:2181");
        assertThat(address.clusterPath()).isEqualTo("/prod");
    }

    @Test
    void anAddressWithoutAClusterNameOrWithAnUnsafeOneIsRefused() {
        assertThatIllegalArgumentException().isThrownBy(() -> ClusterAddress.parse("zk://zk1:2181"));
        assertThatIllegalArgumentException().isThrownBy(() -> ClusterAddress.parse("zk://zk1:2181/walden/"));
        assertThatIllegalArgumentException().isThrownBy(() -> ClusterAddress.parse("zk://zk1:2181/walden/a b"));
        assertThatIllegalArgumentException().isThrownBy(() -> ClusterAddress.parse("http://zk1:2181/prod"));
    }
}
