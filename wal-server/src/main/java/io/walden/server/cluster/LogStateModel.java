package io.walden.server.cluster;

import org.apache.helix.NotificationContext;
import org.apache.helix.model.Message;
import org.apache.helix.participant.statemachine.StateModel;
import org.apache.helix.participant.statemachine.StateModelInfo;
import org.apache.helix.participant.statemachine.Transition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One log's Helix MasterSlave state machine on this server: each transition calls {@link LogRoles}. Helix finds the
 * transitions by their annotations and calls them by reflection, so the class and the methods are public; nothing
 * else should call them.
 *
 * <p>Thread-safety: Helix runs one transition of a log at a time; {@link #reset} may come from its session thread.
 */
@StateModelInfo(initialState = "OFFLINE", states = {"MASTER", "SLAVE", "OFFLINE", "ERROR", "DROPPED"})
public final class LogStateModel extends StateModel {
    private static final Logger LOG = LoggerFactory.getLogger(LogStateModel.class);

    private final String log;
    private final LogRoles roles;

    LogStateModel(String log, LogRoles roles) {
        this.log = log;
        this.roles = roles;
    }

    @Transition(from = "OFFLINE", to = "SLAVE")
    public void onBecomeSlaveFromOffline(Message message, NotificationContext context) throws Exception {
        roles.becomeReplica(log);
    }

    @Transition(from = "SLAVE", to = "MASTER")
    public void onBecomeMasterFromSlave(Message message, NotificationContext context) throws Exception {
        roles.becomePrimary(log);
    }

    @Transition(from = "MASTER", to = "SLAVE")
    public void onBecomeSlaveFromMaster(Message message, NotificationContext context) throws Exception {
        roles.stepDown(log);
    }

    @Transition(from = "SLAVE", to = "OFFLINE")
    public void onBecomeOfflineFromSlave(Message message, NotificationContext context) throws Exception {
        roles.becomeOffline(log);
    }

    @Transition(from = "ERROR", to = "OFFLINE")
    public void onBecomeOfflineFromError(Message message, NotificationContext context) throws Exception {
        roles.becomeOffline(log);
    }

    @Transition(from = "OFFLINE", to = "DROPPED")
    public void onBecomeDroppedFromOffline(Message message, NotificationContext context) throws Exception {
        roles.drop(log);
    }

    @Override
    @Transition(from = "ERROR", to = "DROPPED")
    public void onBecomeDroppedFromError(Message message, NotificationContext context) throws Exception {
        roles.drop(log);
    }

    /** The session ended (close, or expiry then a new session): Helix resets every log to OFFLINE without a transition. */
    @Override
    public void reset() {
        try {
            roles.sessionEnded(log);
        } catch (RuntimeException e) {
            LOG.error("log {}: the listener failed on the end of the session", log, e);
        }
    }
}
