/**
 * The store journal: one log that the durable bytes of every log of a {@code WalStore} go through, so that commits
 * to different logs share one force (docs/group-commit.md, "Flushes across logs"; the entries' format is in
 * docs/format.md, "The store journal"). {@link io.walden.core.internal.journal.StoreJournal} owns the journal and its
 * checkpoint, {@link io.walden.core.internal.journal.LogJournal} is one log's way into it, and
 * {@link io.walden.core.internal.journal.JournalReplay} writes it back into the logs' files at the store's open.
 */
package io.walden.core.internal.journal;
