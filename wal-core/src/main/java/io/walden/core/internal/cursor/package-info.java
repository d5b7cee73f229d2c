/**
 * Named consumer positions behind {@link io.walden.core.Cursors}: the book that stores them as records in the log,
 * their replay on open, their lag and meters, and how they hold back retention. Internal to Walden; the
 * files are specified in docs/format.md ("Cursor files").
 */
package io.walden.core.internal.cursor;
