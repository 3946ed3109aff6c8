package dev.atlas.autoconfigure;

import java.util.List;
import java.util.stream.Stream;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The package graph of the wiring: no cycle; the concerns (each its properties, its
 * auto-configuration and its meters) sit side by side and never import each other;
 * {@code propagation}, which carries the routing context across hops and threads, may
 * serve the concerns but names none of them; {@code loadbalancer}, which composes the
 * routing steps into every load-balancer context, does not import {@code propagation};
 * the integrations with a registry, the actuator or the gateway may use any concern, and
 * nothing uses them; the shared {@code settings} and {@code runtime} name no concern. A
 * package that does not exist (yet) passes every rule.
 */
class PackageDependenciesTest {

	private static final String ROOT = "dev.atlas.autoconfigure";

	/** Each concern's properties, auto-configuration and meters, side by side. */
	private static final List<String> CONCERNS = List.of("affinity", "gray", "warmup", "outlier", "lifecycle",
			"registry", "client", "overload");

	/**
	 * Carries the routing context across hops and threads: concerns may use it, it names
	 * none of them.
	 */
	private static final String PROPAGATION = "propagation";

	/** Composes the routing steps into every load-balancer context. */
	private static final String LOADBALANCER = "loadbalancer";

	/** Adapters to a registry, the actuator or the gateway: they may use any concern. */
	private static final List<String> INTEGRATIONS = List.of("actuator", "gateway", "nacos", "zookeeper", "eureka");

	/**
	 * Shared by the concerns: the per-service settings and the runtime-rules machinery.
	 */
	private static final List<String> SHARED = List.of("settings", "runtime");

	private final JavaClasses wiring = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages(ROOT);

	@Test
	void packagesHaveNoCycle() {
		slices().matching(ROOT + ".(*)..").should().beFreeOfCycles().check(this.wiring);
	}

	@Test
	void concernsDoNotImportEachOther() {
		for (String concern : CONCERNS) {
			for (String other : CONCERNS) {
				if (!other.equals(concern)) {
					noDependency(concern, other).check(this.wiring);
				}
			}
		}
	}

	@Test
	void loadBalancerDoesNotImportPropagation() {
		noDependency(LOADBALANCER, PROPAGATION).check(this.wiring);
	}

	@Test
	void propagationNamesNoConcern() {
		for (String other : everyPackageBut(PROPAGATION)) {
			if (!SHARED.contains(other)) {
				noDependency(PROPAGATION, other).check(this.wiring);
			}
		}
	}

	@Test
	void nothingImportsAnIntegration() {
		for (String integration : INTEGRATIONS) {
			for (String other : everyPackageBut(integration)) {
				noDependency(other, integration).check(this.wiring);
			}
		}
	}

	@Test
	void sharedPackagesNameNoConcern() {
		for (String shared : SHARED) {
			for (String other : everyPackageBut(shared)) {
				if (!SHARED.contains(other)) {
					noDependency(shared, other).check(this.wiring);
				}
			}
		}
	}

	private static List<String> everyPackageBut(String excluded) {
		return Stream.of(CONCERNS, List.of(PROPAGATION, LOADBALANCER), INTEGRATIONS, SHARED)
			.flatMap(List::stream)
			.filter((name) -> !name.equals(excluded))
			.toList();
	}

	private static ArchRule noDependency(String from, String to) {
		return noClasses().that()
			.resideInAPackage(ROOT + "." + from + "..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage(ROOT + "." + to + "..")
			.because(from + " must not depend on " + to)
			.allowEmptyShould(true);
	}

}
