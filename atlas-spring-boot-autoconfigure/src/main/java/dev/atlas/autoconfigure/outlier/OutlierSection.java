package dev.atlas.autoconfigure.outlier;

import dev.atlas.autoconfigure.settings.Section;
import dev.atlas.loadbalancer.outlier.OutlierRules;

/**
 * The outlier detection section of a service's rules. Not instantiable.
 *
 * @since 0.1.0
 */
public final class OutlierSection {

	/**
	 * {@code atlas.outlier} overlaid by {@code atlas.services.<service-id>.outlier};
	 * disabled rules when {@code enabled} is {@code false}.
	 */
	public static final Section<OutlierProperties, OutlierRules> SECTION = Section.of("outlier", OutlierProperties::new,
			(properties, context) -> properties.toRules(context.propertyName("outlier")));

	private OutlierSection() {
	}

}
