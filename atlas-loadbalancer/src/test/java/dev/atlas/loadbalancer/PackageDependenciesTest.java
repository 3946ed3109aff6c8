package dev.atlas.loadbalancer;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.jspecify.annotations.NullMarked;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine's package graph: no cycle; the concerns ({@code choice}, {@code routing},
 * {@code weighting}, {@code stats}, {@code outlier}, {@code overload}, {@code orca}) sit
 * side by side, depend on the model ({@code instance}, {@code spi}, {@code support})
 * only, and never on each other nor on the Spring adapter ({@code pipeline}), which knows
 * them only through {@code spi}.
 */
class PackageDependenciesTest {

	private static final String ROOT = "dev.atlas.loadbalancer";

	private static final String[] CONCERNS = { "choice", "routing", "weighting", "stats", "outlier", "overload",
			"orca" };

	private final JavaClasses engine = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages(ROOT);

	@Test
	void packagesHaveNoCycle() {
		slices().matching(ROOT + ".(*)..").should().beFreeOfCycles().check(this.engine);
	}

	@Test
	void concernsDependOnTheModelOnly() {
		for (String concern : CONCERNS) {
			for (String other : CONCERNS) {
				if (!other.equals(concern)) {
					noDependency(concern, other).check(this.engine);
				}
			}
			noDependency(concern, "pipeline").check(this.engine);
			noDependency(concern, "context").check(this.engine);
		}
	}

	@Test
	void theModelDependsOnNoConcern() {
		for (String model : new String[] { "instance", "spi", "support", "context" }) {
			for (String concern : CONCERNS) {
				noDependency(model, concern).check(this.engine);
			}
			noDependency(model, "pipeline").check(this.engine);
		}
	}

	@Test
	void thePipelineKnowsConcernsOnlyThroughTheSpi() {
		for (String concern : CONCERNS) {
			noDependency("pipeline", concern).check(this.engine);
		}
	}

	@Test
	void everyPackageIsNullMarked() {
		assertThat(this.engine.stream().map((type) -> type.getPackageName()).distinct()).hasSizeGreaterThanOrEqualTo(9)
			.allSatisfy((name) -> assertThat(Class.forName(name + ".package-info").getAnnotation(NullMarked.class))
				.as("@NullMarked package-info.java in %s", name)
				.isNotNull());
	}

	private static ArchRule noDependency(String from, String to) {
		return noClasses().that()
			.resideInAPackage(ROOT + "." + from + "..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage(ROOT + "." + to + "..")
			.because(from + " must not depend on " + to);
	}

}
