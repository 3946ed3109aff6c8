package dev.atlas.autoconfigure.overload;

import dev.atlas.autoconfigure.settings.Section;
import dev.atlas.loadbalancer.overload.RetryBudgetRules;

/**
 * The retry section of a service's rules. Not instantiable.
 *
 * @since 0.1.0
 */
public final class RetrySection {

	/**
	 * {@code atlas.retry} overlaid by {@code atlas.services.<service-id>.retry}: the
	 * service's retry budget rules.
	 */
	public static final Section<RetryProperties, RetryBudgetRules> SECTION = Section.of("retry", RetryProperties::new,
			(properties, context) -> properties.toRules(context.propertyName("retry")));

	private RetrySection() {
	}

}
