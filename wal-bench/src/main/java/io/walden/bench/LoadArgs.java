package io.walden.bench;

import java.nio.file.Path;

/**
 * The load generators' command line: {@code [--quick|--full] [--dir DIR] [--json FILE] [--only REGEX]}.
 *
 * @param full  every payload, method and level (for publishing) rather than the quick set
 * @param dir   where the logs under test live (its file system is what is measured)
 * @param json  where the results go
 * @param only  a regular expression found in the names of the scenarios to run; all by default
 */
record LoadArgs(boolean full, Path dir, Path json, String only) {

    static LoadArgs parse(String program, String[] args, Path defaultJson) {
        boolean full = false;
        Path dir = Path.of("target/bench-data");
        Path json = defaultJson;
        String only = ".*";
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--full": full = true; break;
                case "--quick": full = false; break;
                case "--dir": dir = Path.of(args[++i]); break;
                case "--json": json = Path.of(args[++i]); break;
                case "--only": only = args[++i]; break;
                default: throw new IllegalArgumentException("unknown argument " + args[i] + " (usage: " + program
                        + " [--quick|--full] [--dir DIR] [--json FILE] [--only REGEX])");
            }
        }
        return new LoadArgs(full, dir, json, only);
    }
}
