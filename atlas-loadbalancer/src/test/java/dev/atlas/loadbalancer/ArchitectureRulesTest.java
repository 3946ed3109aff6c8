package dev.atlas.loadbalancer;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * Spring Boot's architecture rules that fit the engine: case conversions name their
 * {@link java.util.Locale} (the default locale turns {@code "I"} into a dotless
 * {@code "ı"} in Turkish).
 */
class ArchitectureRulesTest {

	private final JavaClasses engine = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("dev.atlas.loadbalancer");

	@Test
	void caseConversionsNameTheirLocale() {
		noClasses().should()
			.callMethod(String.class, "toLowerCase")
			.orShould()
			.callMethod(String.class, "toUpperCase")
			.because("the default locale changes the result (use Locale.ROOT)")
			.check(this.engine);
	}

}
