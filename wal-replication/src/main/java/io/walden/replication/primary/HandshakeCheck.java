package io.walden.replication.primary;

import io.walden.core.Epoch;
import io.walden.core.EpochHistory;
import io.walden.core.Lsn;
import io.walden.replication.policy.SyncPolicy;
import io.walden.replication.protocol.Frame;
import io.walden.replication.protocol.FrameDescriptor;

import java.security.MessageDigest;
import java.util.Set;

/**
 * The primary's answer to a replica's hello (docs/replication-protocol.md, the hello; the epoch rules in
 * docs/replication.md), as a pure function of the hello and of what the primary is: the one place the order of the
 * checks is written, testable without a socket. Order matters: authentication before anything is revealed, the
 * epoch checks before {@code LSN_REMOVED} (a replica rewinds before it fetches from an archive), capacity last.
 */
final class HandshakeCheck {
    private HandshakeCheck() {
    }

    /**
     * What the primary is when a hello arrives.
     *
     * @param shippableEnd what a replica may already hold (written, or only flushed, as shipped)
     * @param cascading    this log is itself a replica (it refuses appends): some refusals are then not final
     * @param secret       the shared secret replicas must send, or null
     * @param hasSlot      the hello's name already has a slot here (it takes no new one)
     */
    record Primary(EpochHistory history, long logId, long oldestLsn, long shippableEnd, boolean cascading, byte[] secret,
                   boolean hasSlot, int slots, int replicas, int maxReplicas) {
    }

    /** The answer. */
    sealed interface Answer permits Refuse, Identify, Rewind, Accept {
    }

    /** An error frame, then close; {@code code} says whether the replica may retry (Frame.Error). */
    record Refuse(int code, String message) implements Answer {
    }

    /** A new copy asking who this primary is (log id 0): a welcome, then close. */
    record Identify() implements Answer {
    }

    /** The replica must rewind first: a welcome carrying the history it compares its own with, then close. */
    record Rewind(String why) implements Answer {
    }

    /** Stream to it (if no replica of that name is connected already). */
    record Accept() implements Answer {
    }

    static Answer answer(Frame.Hello hello, Primary p) {
        EpochHistory history = p.history();
        Epoch epoch = new Epoch(hello.epoch(), hello.epochStartLsn());
        long rewind = history.rewindPoint(epoch, hello.startLsn());
        String diverged = rewind >= 0 ? null : history.divergence(epoch, hello.startLsn());
        if (hello.version() != FrameDescriptor.PROTOCOL_VERSION && hello.version() != FrameDescriptor.STORE_PROTOCOL_VERSION) {
            return new Refuse(Frame.Error.UNSUPPORTED_VERSION, "protocol version " + hello.version() + " is not supported; "
                    + "this primary speaks " + FrameDescriptor.PROTOCOL_VERSION);
        }
        Refuse unauthenticated = authenticate(p.secret(), hello.secret());
        if (unauthenticated != null) {
            return unauthenticated;
        }
        if (hello.logId() != 0 && hello.logId() != p.logId()) {
            return new Refuse(Frame.Error.ANOTHER_LOG, "this primary's log is " + Long.toHexString(p.logId()) + ", not "
                    + Long.toHexString(hello.logId()) + ": a replica of another log");
        }
        if (!SyncPolicy.isValidName(hello.name())) {
            return badName(hello.name());
        }
        if (hello.logId() == 0) {
            return new Identify();
        }
        if (hello.epoch() > history.current().number()) {
            // The replica lives in a newer epoch: never "rebuild" (that would throw away its newer records).
            return new Refuse(Frame.Error.NOT_A_PRIMARY, p.cascading()
                    ? "this cascading replica is in epoch " + history.current().number() + ", behind the replica's epoch "
                            + hello.epoch() + "; retry later"
                    : "this primary is stale: it is in epoch " + history.current().number() + " but the replica is in epoch "
                            + hello.epoch() + ", promoted elsewhere; point the replica at the current primary");
        }
        if (history.find(hello.epoch()) == null) {
            // An epoch this history skipped (a group member elected that was lost before anyone followed it; the next
            // election numbered past it): the replica compares its own history with this one, rewinds to the newest
            // epoch both hold, or refuses to follow if they share none.
            return new Rewind("it is in epoch " + hello.epoch() + ", which this history skipped");
        }
        if (diverged != null) {
            return new Refuse(Frame.Error.EPOCH_DIVERGED, "the replica's history diverged from this primary's: " + diverged
                    + "; rebuild it from this primary");
        }
        if (rewind >= 0) {
            // Its epoch ended at `rewind` here, and it holds records past that which this log never had (lost in a
            // crash before they were flushed, or an old primary's after a promotion).
            return new Rewind("it ends at " + Lsn.format(hello.startLsn()) + ", past " + Lsn.format(rewind)
                    + " where its epoch " + hello.epoch() + " ended here");
        }
        if (hello.startLsn() < p.oldestLsn()) {
            return new Refuse(Frame.Error.LSN_REMOVED, "requested LSN " + Lsn.format(hello.startLsn())
                    + " has already been removed; the oldest kept LSN is " + Lsn.format(p.oldestLsn()));
        }
        if (hello.startLsn() > p.shippableEnd()) {
            return p.cascading()
                    // A cascading replica behind its downstream (which followed another upstream before): not final.
                    ? new Refuse(Frame.Error.NOT_A_PRIMARY, "this cascading replica can serve only up to "
                            + Lsn.format(p.shippableEnd()) + ", behind the replica's " + Lsn.format(hello.startLsn()) + "; retry later")
                    : new Refuse(Frame.Error.EPOCH_DIVERGED, "the replica's log ends at " + Lsn.format(hello.startLsn())
                            + ", beyond this primary's " + Lsn.format(p.shippableEnd()) + ": its history diverged; rebuild it");
        }
        if (!p.hasSlot() && (p.slots() >= p.maxReplicas() || p.replicas() >= p.maxReplicas())) {
            // Each replica name costs a slot, meters and a sender: a peer inventing names must not grow them
            // without bound (PostgreSQL's max_wal_senders and max_replication_slots).
            return tooMany(p.maxReplicas());
        }
        return new Accept();
    }

    /**
     * The connection checks of a version 6 hello (docs/replication-protocol.md, "Version 6"), in version 5's order:
     * the secret, the name, capacity; each log is then checked by {@link #answer} when the replica starts it.
     *
     * @param secret    the shared secret replicas must send, or null
     * @param connected the replica names connected now (over version 6)
     * @param hasSlot   the name has a slot on the root log (it takes no new place)
     */
    static Answer answerStore(Frame.StoreHello hello, byte[] secret, Set<String> connected, boolean hasSlot,
                              int slots, int maxReplicas) {
        Refuse unauthenticated = authenticate(secret, hello.secret());
        if (unauthenticated != null) {
            return unauthenticated;
        }
        if (!SyncPolicy.isValidName(hello.name())) {
            return badName(hello.name());
        }
        if (connected.contains(hello.name())) {
            return new Refuse(Frame.Error.MALFORMED, "a replica named '" + hello.name() + "' is already connected");
        }
        if (!hasSlot && (slots >= maxReplicas || connected.size() >= maxReplicas)) {
            return tooMany(maxReplicas);
        }
        return new Accept();
    }

    /** The secret check, in constant time; null when it passes (or none is required). */
    private static Refuse authenticate(byte[] required, byte[] given) {
        if (required != null && !MessageDigest.isEqual(required, given)) {
            return new Refuse(Frame.Error.AUTHENTICATION_FAILED, "authentication failed: the replica's secret is "
                    + (given.length == 0 ? "missing" : "wrong") + " (set the same replication secret on both)");
        }
        return null;
    }

    private static Refuse badName(String name) {
        return new Refuse(Frame.Error.MALFORMED, "a replica's name is 1 to 64 letters, digits, '_', '.' or '-', not '"
                + name + "'");
    }

    /** Each replica name costs a slot, meters and a sender: a peer inventing names must not grow them without bound. */
    private static Refuse tooMany(int maxReplicas) {
        return new Refuse(Frame.Error.TOO_MANY_REPLICAS, "this primary keeps at most " + maxReplicas
                + " replicas and slots (max-replicas), all taken; retry later, or drop the slot of a replica that is "
                + "gone for good");
    }
}
