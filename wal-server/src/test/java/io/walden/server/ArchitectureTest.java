package io.walden.server;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.Location;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The layering, checked on the main classes of wal-core, wal-replication and wal-server (this module sees all three):
 * the build fails when a change adds an arrow the architecture does not have. docs/glossary.md names the parts.
 */
class ArchitectureTest {
    private static JavaClasses main;

    @BeforeAll
    static void importMainClasses() {
        main = new ClassFileImporter()
                .withImportOption((Location location) -> !location.contains("test-classes") && !location.contains("-tests.jar"))
                .importPackages("io.walden");
    }

    @Test
    void noPartOfTheLogReachesBackUpToItsFacade() {
        noClasses().that().resideInAPackage("io.walden.core..")
                .and().haveNameNotMatching("io\\.walden\\.core\\.Wal(\\$.*)?")
                .should().dependOnClassesThat().belongToAnyOf(io.walden.core.Wal.class)
                .because("Wal is the applications' facade over the parts; a part that needs the log gets a narrow view "
                        + "(ArchivedLog, WalMetrics.Sources, ReplicatedLog, ReadPath) or the parts (WalParts)")
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
     * wal-core's internal packages stay internal. The classes listed are the reach-ins that exist (issue "Architecture":
     * they are to move behind narrow seams); a new one fails the build.
     */
    @Test
    void otherModulesUseOnlyTheKnownInternalsOfTheLog() {
        DescribedPredicate<JavaClass> internals = resideInAnyPackage("io.walden.core.commit..", "io.walden.core.segment..",
                "io.walden.core.recovery..", "io.walden.core.record..", "io.walden.core.sync..", "io.walden.core.metrics..")
                .and(DescribedPredicate.not(belongToAnyOf(
                        io.walden.core.commit.RemoteWaits.class,
                        io.walden.core.record.RecordDescriptor.class,
                        io.walden.core.recovery.ControlFile.class,
                        io.walden.core.recovery.ControlFile.Checkpoint.class,
                        io.walden.core.recovery.LogInspector.class,
                        io.walden.core.recovery.LogInspector.Visitor.class,
                        io.walden.core.recovery.LogInspector.RecordInfo.class,
                        io.walden.core.recovery.LogInspector.Result.class,
                        io.walden.core.segment.SegmentFiles.class,
                        io.walden.core.segment.SegmentHeaderDescriptor.class,
                        io.walden.core.commit.FlushObserver.class)));
        noClasses().that().resideOutsideOfPackage("io.walden.core..")
                .should().dependOnClassesThat(internals)
                .check(main);
    }
}
