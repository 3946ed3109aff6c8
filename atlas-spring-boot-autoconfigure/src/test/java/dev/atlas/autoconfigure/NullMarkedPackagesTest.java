package dev.atlas.autoconfigure;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.jspecify.annotations.NullMarked;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every package of the auto-configuration has a {@code package-info.java} marked
 * {@code @NullMarked}.
 */
class NullMarkedPackagesTest {

	@Test
	void everyPackageIsNullMarked() {
		assertThat(new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
			.importPackages("dev.atlas.autoconfigure")
			.stream()
			.map((type) -> type.getPackageName())
			.distinct())
			.hasSizeGreaterThanOrEqualTo(6)
			.allSatisfy((name) -> assertThat(Class.forName(name + ".package-info").getAnnotation(NullMarked.class))
				.as("@NullMarked package-info.java in %s", name)
				.isNotNull());
	}

}
