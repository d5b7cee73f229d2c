package io.walden.replication;

import io.walden.core.SyncMethod;
import io.walden.core.internal.sync.ForceTarget;
import io.walden.core.internal.sync.SyncStrategy;

import java.io.IOException;

/**
 * The real fdatasync, behind a gate that a test closes to hold every force of one log (a slow disk's force, stretched
 * at will): what is written stays unflushed there while the rest of the system goes on.
 */
final class GatedSync implements SyncStrategy {
    private final SyncStrategy real = SyncStrategy.of(SyncMethod.FDATASYNC);
    private boolean open = true;

    synchronized void close() {
        open = false;
    }

    synchronized void open() {
        open = true;
        notifyAll();
    }

    @Override
    public void force(ForceTarget segment, long fromOffset, long toOffset) throws IOException {
        synchronized (this) {
            while (!open) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted at the gate", e);
                }
            }
        }
        real.force(segment, fromOffset, toOffset);
    }
}
