package io.walden.core.internal;

import io.walden.core.WalException;

import java.util.ArrayList;
import java.util.List;

/**
 * Checks, before a log maps anything, that the JVM lets Chronicle Bytes reach the JDK internals it maps files through:
 * without them the first mapping fails deep inside Chronicle with an {@code AssertionError}, which names neither
 * Walden nor the flags that fix it (README, "Embedding it in 30 seconds").
 *
 * <p>Thread-safety: stateless.
 */
public final class JvmAccess {
    /** What a JVM running Walden needs (walden.jar's manifest carries them; a JVM of an application must pass them). */
    static final String FLAGS = "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED "
            + "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED";

    private JvmAccess() {
    }

    /** @throws WalException naming the flags when the JVM withholds what mapping a segment needs */
    public static void check() {
        Module base = Object.class.getModule();
        Module walden = JvmAccess.class.getModule(); // unnamed on the class path: ALL-UNNAMED covers it
        List<String> missing = new ArrayList<>();
        if (!base.isOpen("java.lang.reflect", walden)) {
            missing.add("--add-opens=java.base/java.lang.reflect=" + target(walden));
        }
        if (!base.isExported("sun.nio.ch", walden)) {
            missing.add("--add-exports=java.base/sun.nio.ch=" + target(walden));
        }
        if (!missing.isEmpty()) {
            throw new WalException("Walden maps its segments through JDK internals, and this JVM withholds them: run it "
                    + "with " + String.join(" ", missing) + " (all Walden's flags: " + FLAGS + "; README, \"Embedding\")");
        }
    }

    private static String target(Module m) {
        return m.isNamed() ? m.getName() : "ALL-UNNAMED";
    }
}
