package io.walden.server.cluster;

/**
 * What a server does when Helix changes its role for one log: Helix decides <em>where</em> a log lives and which of
 * its copies it wants as primary; Walden decides whether a copy <em>may</em> lead (epochs, fencing, the most caught-up
 * copy wins). The methods with a log are Helix MasterSlave transitions (and the end of them all, {@link #sessionEnded});
 * a transition completes when the method returns, and Helix sends the next one (for this log, on this server) only
 * then. {@link #connectionLost} and {@link #connectionRestored} concern the whole server.
 *
 * <p>Refusing: a method that throws fails the transition. Helix puts the log in the ERROR state on this server (the
 * external view shows it, {@link Placement} reports {@link Role#ERROR}), calls nothing more for it here and places no
 * replacement copy (the ERROR copy keeps its slot) until an operator resets it (Helix's {@code resetPartition}, which
 * calls {@link #becomeOffline}) or the log is removed (then {@link #drop}). A refused {@link #becomePrimary} makes Helix
 * promote another REPLICA of the log if there is one (seen within about 200 ms); if there is none, the log has no
 * primary until the reset. While any log is in ERROR, Helix stops moving logs for balance across the whole cluster.
 * See docs/cluster.md, "The listener contract".
 *
 * <p>Threads: Helix calls from its message-handling pool; calls for different logs run at once, calls for one log
 * never overlap. A slow method holds that log's next transition (and counts against the move throttle), not others'.
 */
public interface LogRoles {
    /**
     * OFFLINE to REPLICA (Helix OFFLINE→SLAVE): open or create the log's files and start following its primary. Return
     * once the copy follows: Helix may promote a REPLICA next, so a copy that returns before it has caught up is one
     * that a promotion could find behind.
     */
    void becomeReplica(String log) throws Exception;

    /**
     * REPLICA to PRIMARY (SLAVE→MASTER): take the log's appends. Helix has already stepped the former primary down if
     * it could reach it; if its server was lost, nothing was asked of it. Before returning, Walden makes sure this
     * copy may lead: it holds everything the log acknowledged (the most caught-up copy wins, catching up from a
     * better one first) and it begins a new epoch that fences the former primary. Throw to refuse.
     */
    void becomePrimary(String log) throws Exception;

    /**
     * PRIMARY to REPLICA (MASTER→SLAVE): a planned hand-over (balance, or the log's replicas moved). Stop acknowledging
     * appends before returning, then follow the next primary when it appears.
     */
    void stepDown(String log) throws Exception;

    /** REPLICA to OFFLINE (SLAVE→OFFLINE, and ERROR→OFFLINE on an operator's reset): stop following, keep the files. */
    void becomeOffline(String log) throws Exception;

    /** OFFLINE to gone (OFFLINE→DROPPED, ERROR→DROPPED): the log left this server; its files may be deleted. */
    void drop(String log) throws Exception;

    /**
     * Helix forgot this server's role for the log without a transition: the member closed, or its ZooKeeper session
     * expired and a new one began (every role is then OFFLINE, and Helix assigns afresh). Stop acting as primary or
     * replica at once; keep the files. A server cut off from ZooKeeper hears this only when it reconnects: what it
     * hears at once is {@link #connectionLost}. Must not throw.
     */
    void sessionEnded(String log);

    /**
     * The server's ZooKeeper connection broke: its session is in doubt, and if it does not come back within the session
     * timeout the controller promotes other copies of its logs. Comes two thirds of the session timeout after the last
     * word from ZooKeeper at the latest, so before the session can expire (docs/cluster.md, "The listener contract").
     * A primary stops acknowledging appends now, until {@link #connectionRestored}. Called on ZooKeeper's event thread:
     * return at once; must not throw.
     */
    void connectionLost();

    /**
     * The connection is back. On the same session, every role is as it was; if the session expired meanwhile, every
     * log's {@link #sessionEnded} came first and Helix assigns roles afresh. Once after each {@link #connectionLost}
     * (unless the member closes first). Called on ZooKeeper's event thread: return at once; must not throw.
     */
    void connectionRestored();
}
