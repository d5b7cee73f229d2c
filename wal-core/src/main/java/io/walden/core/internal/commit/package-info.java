/**
 * The append and commit path: reservation, publication, the written and flushed positions, the
 * lock-free group-commit coordinator and its waiters. Internal to Walden: public only so that sibling
 * packages can reach it; not an API. The algorithm is described in {@code docs/group-commit.md}.
 */
package io.walden.core.internal.commit;
