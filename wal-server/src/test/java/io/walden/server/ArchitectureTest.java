package io.walden.server;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.Location;
import io.walden.core.Cursors;
import io.walden.core.NonWaitingAppends;
import io.walden.core.Wal;
import io.walden.core.WalClaim;
import io.walden.core.WalReader;
import io.walden.core.WalStatus;
import io.walden.core.internal.metrics.LatencyBuckets;
import io.walden.core.internal.recovery.LogInspector;
import io.walden.core.internal.segment.SegmentFiles;
import io.walden.core.internal.thread.Loop;
import io.walden.core.internal.thread.LoopGroup;
import io.walden.core.internal.thread.LoopRunner;
import io.walden.core.internal.thread.WaldenThreads;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.equivalentTo;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The layering, checked on the main classes of wal-core, wal-replication and wal-server (this module sees all three):
 * the build fails when a change adds an arrow the architecture does not have. The public API is {@code io.walden.core}
 * (with {@code .replication} and {@code .archive}); its implementation is {@code io.walden.core.internal..}, public only
 * because Java packages have no friends (Chronicle Queue's {@code impl}, Aeron's client/driver split). docs/glossary.md
 * names the parts.
 */
class ArchitectureTest {
    private static JavaClasses main;

    @BeforeAll
    static void importMainClasses() {
        main = new ClassFileImporter()
                .withImportOption((Location location) -> !location.contains("test-classes") && !location.contains("-tests.jar"))
                .importPackages("io.walden");
    }

    /**
     * Dependencies run one way, API to implementation: the implementation uses the API's value types (Lsn, Durability,
     * WalRecord, WalConfig, the exceptions, the SPI it implements) and never the facades an application holds.
     */
    @Test
    void theImplementationNeverReachesBackUpToTheFacades() {
        noClasses().that().resideInAPackage("io.walden.core.internal..")
                .should().dependOnClassesThat(belongToAnyOf(Wal.class, Cursors.class, WalReader.class, WalClaim.class,
                        WalStatus.class, NonWaitingAppends.class).and(DescribedPredicate.not(equivalentTo(WalReader.Visibility.class))))
                .because("a part of the log that needs another gets it at construction (WalParts wires them), never the facade over them; "
                        + "WalReader.Visibility, an enum, is a value type")
                .check(main);
    }

    @Test
    void theLogDependsOnNeitherReplicationNorTheServer() {
        noClasses().that().resideInAPackage("io.walden.core..")
                .should().dependOnClassesThat().resideInAnyPackage("io.walden.replication..", "io.walden.server..")
                .check(main);
    }

    @Test
    void replicationDoesNotDependOnTheServer() {
        noClasses().that().resideInAPackage("io.walden.replication..")
                .should().dependOnClassesThat().resideInAPackage("io.walden.server..")
                .check(main);
    }

    /**
     * Other modules reach the log through its API and the handle built for replication ({@code wal.replication()},
     * {@code io.walden.core.replication}: the write stage writes fetched archive segments, {@code SyncConfirmations}
     * takes the policy's positions, {@code Restore} rebuilds a log). What crosses the module boundary besides is what
     * Walden's own modules share as one policy, each for a reason:
     * <ul>
     *   <li>{@code WaldenThreads}: one naming and daemon policy for every thread Walden starts (the glossary's thread
     *       list), replication's and the server's included;</li>
     *   <li>{@code Loop}, {@code LoopGroup}, {@code LoopRunner}: one way to run many background jobs on a few threads,
     *       each idling until woken or due: a store's logs' jobs, and replication's senders and receivers, so that a
     *       thousand logs do not cost a thousand threads;</li>
     *   <li>{@code SegmentFiles}: the log directory's file conventions, which files beside the log follow: the durable
     *       replace-a-file recipe (the slots file), the temporary suffix a log's open clears (a fetch in progress), a
     *       segment's name (in what {@code walden restore} reports);</li>
     *   <li>{@code LogInspector}: the engine of the offline tools (dump, verify), which read a directory without
     *       opening the log;</li>
     *   <li>{@code LatencyBuckets}: one set of histogram buckets per kind of value, so that the server's commit latency
     *       aggregates with the log's own histograms.</li>
     * </ul>
     */
    @Test
    void otherModulesUseTheLogThroughItsApiAndOnlyTheListedInternals() {
        DescribedPredicate<JavaClass> allowed = belongToAnyOf(WaldenThreads.class, Loop.class, LoopGroup.class, LoopRunner.class, SegmentFiles.class,
                LogInspector.class, LogInspector.Visitor.class, LogInspector.RecordInfo.class, LogInspector.Result.class,
                LatencyBuckets.class);
        noClasses().that().resideOutsideOfPackage("io.walden.core..")
                .should().dependOnClassesThat(resideInAPackage("io.walden.core.internal..").and(DescribedPredicate.not(allowed)))
                .check(main);
    }

    /**
     * The API shows only API: no type of {@code io.walden.core}, {@code .replication} or {@code .archive} that an
     * application can see extends or implements an implementation type ({@code io.walden.core.internal..}) or a
     * Chronicle one ({@code net.openhft..}), nor names one in a public or protected member, so that the implementation
     * and the library under it can change without breaking an application's code.
     */
    @Test
    void theApiNamesNoImplementationType() {
        List<String> shown = new ArrayList<>();
        for (JavaClass c : main) {
            if (!visibleApi(c)) {
                continue;
            }
            c.getRawSuperclass().filter(ArchitectureTest::hidden).ifPresent(s -> shown.add(c.getName() + " extends " + s.getName()));
            c.getRawInterfaces().stream().filter(ArchitectureTest::hidden).forEach(i -> shown.add(c.getName() + " implements " + i.getName()));
            for (JavaMember m : c.getMembers()) {
                if (!m.getModifiers().contains(JavaModifier.PUBLIC) && !m.getModifiers().contains(JavaModifier.PROTECTED)) {
                    continue;
                }
                Set<JavaClass> named = new java.util.HashSet<>();
                if (m instanceof JavaField f) {
                    named.addAll(f.getType().getAllInvolvedRawTypes());
                } else if (m instanceof JavaCodeUnit u) {
                    named.addAll(u.getReturnType().getAllInvolvedRawTypes());
                    u.getParameterTypes().forEach(t -> named.addAll(t.getAllInvolvedRawTypes()));
                }
                named.stream().filter(ArchitectureTest::hidden).forEach(t -> shown.add(m.getFullName() + " names " + t.getName()));
            }
        }
        Assertions.assertThat(shown).as("implementation types the API shows").isEmpty();
    }

    /** A type of the API's packages that an application can reach: public, and nested only in such types. */
    private static boolean visibleApi(JavaClass c) {
        String p = c.getPackageName();
        if (!p.startsWith("io.walden.core") || p.startsWith("io.walden.core.internal")) {
            return false;
        }
        for (JavaClass k = c; k != null; k = k.getEnclosingClass().orElse(null)) {
            if (!k.getModifiers().contains(JavaModifier.PUBLIC)) {
                return false;
            }
        }
        return true;
    }

    private static boolean hidden(JavaClass c) {
        return c.getPackageName().startsWith("io.walden.core.internal") || c.getPackageName().startsWith("net.openhft");
    }

    /**
     * A newcomer finds the API in one package: its public types, and beside them only {@link io.walden.core.WalConfig}'s
     * own helpers (sizes, the checks across its settings, and what a store keeps of them).
     */
    @Test
    void theApiPackageHoldsThePublicTypesAndTheFacadesHelpersOnly() {
        Set<String> hidden = new TreeSet<>();
        int published = 0;
        for (JavaClass c : main) {
            if (c.getPackageName().equals("io.walden.core") && c.isTopLevelClass() && !c.getSimpleName().equals("package-info")) {
                if (c.getModifiers().contains(JavaModifier.PUBLIC)) {
                    published++;
                } else {
                    hidden.add(c.getSimpleName());
                }
            }
        }
        // The config's helpers, beside it for the package-private members of its settings records (the checks, the
        // builder's withers and the records a store keeps a log's settings from).
        Assertions.assertThat(hidden).containsExactlyInAnyOrder("WalConfigSizes", "WalConfigValidation", "StoreLogSettings", "StoreLogConfigs");
        // WalConfig's settings records (one per concept: segments, commit, recovery, retention, compression, identity)
        // are six of them.
        Assertions.assertThat(published).as("public types of io.walden.core").isBetween(25, 45);
    }
}
