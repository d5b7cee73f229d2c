package io.walden.core;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Child-JVM main for WalStoreCrashTest: creates and deletes logs in a store, forever, saying what it is about to do and
 * what it did: {@code c <name>} before a creation and {@code C <name> <lsn>} once the log exists and holds one record
 * (its name, LOCAL), {@code d <name>} before a deletion and {@code D <name>} once it is done. Every second log it
 * created is deleted again.
 *
 * <p>Args: store directory, segment size, first log number.
 */
public final class StoreChurner {
    private StoreChurner() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        long segmentSize = Long.parseLong(args[1]);
        int first = Integer.parseInt(args[2]);
        WalStore store = WalStore.open(WalStoreConfig.builder(dir).defaults(b -> b.segmentSize(segmentSize)).build());
        System.out.println("READY");
        for (int n = first; ; n++) {
            String name = "log-" + n;
            say("c " + name);
            long lsn = store.create(name).append(name.getBytes(StandardCharsets.UTF_8), Durability.LOCAL);
            say("C " + name + " " + lsn);
            if (n % 2 == 1) {
                String doomed = "log-" + (n - 1);
                say("d " + doomed);
                store.delete(doomed);
                say("D " + doomed);
            }
        }
    }

    private static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
