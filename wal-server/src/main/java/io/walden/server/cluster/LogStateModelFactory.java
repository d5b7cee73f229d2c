package io.walden.server.cluster;

import org.apache.helix.participant.statemachine.StateModelFactory;

/** Makes the state machine of each log Helix places on this server; every one calls the same {@link LogRoles}. */
final class LogStateModelFactory extends StateModelFactory<LogStateModel> {
    private final LogRoles roles;

    LogStateModelFactory(LogRoles roles) {
        this.roles = roles;
    }

    @Override
    public LogStateModel createNewStateModel(String resourceName, String partitionName) {
        return new LogStateModel(resourceName, roles);
    }
}
