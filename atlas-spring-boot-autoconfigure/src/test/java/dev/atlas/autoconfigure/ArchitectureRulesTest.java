package dev.atlas.autoconfigure;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfiguration;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.fields;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.methods;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * Spring Boot's architecture rules that fit the auto-configuration: case conversions name
 * their {@link java.util.Locale}; auto-configuration classes are {@code final} and expose
 * nothing but constants (their beans are the API, not their methods).
 */
class ArchitectureRulesTest {

	private final JavaClasses autoconfigure = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("dev.atlas.autoconfigure");

	@Test
	void caseConversionsNameTheirLocale() {
		noClasses().should()
			.callMethod(String.class, "toLowerCase")
			.orShould()
			.callMethod(String.class, "toUpperCase")
			.because("the default locale changes the result (use Locale.ROOT)")
			.check(this.autoconfigure);
	}

	@Test
	void autoConfigurationsAreFinal() {
		classes().that()
			.areAnnotatedWith(AutoConfiguration.class)
			.should()
			.haveModifier(JavaModifier.FINAL)
			.check(this.autoconfigure);
	}

	@Test
	void autoConfigurationsHaveNoPublicMethods() {
		methods().that()
			.areDeclaredInClassesThat()
			.areAnnotatedWith(AutoConfiguration.class)
			.should()
			.notBePublic()
			.allowEmptyShould(true)
			.check(this.autoconfigure);
	}

	@Test
	void autoConfigurationsHaveNoPublicFieldsButConstants() {
		fields().that()
			.areDeclaredInClassesThat()
			.areAnnotatedWith(AutoConfiguration.class)
			.and()
			.arePublic()
			.should()
			.beStatic()
			.andShould()
			.beFinal()
			.allowEmptyShould(true)
			.check(this.autoconfigure);
	}

}
