package dev.atlas.autoconfigure.warmup;

import dev.atlas.autoconfigure.settings.Section;
import dev.atlas.loadbalancer.weighting.WarmupRules;

/**
 * The warmup section of a service's rules. Not instantiable.
 *
 * @since 0.1.0
 */
public final class WarmupSection {

	/**
	 * {@code atlas.warmup} overlaid by {@code atlas.services.<service-id>.warmup}; the
	 * rules are {@link WarmupRules#OFF} when warmup is disabled.
	 */
	public static final Section<WarmupProperties, WarmupRules> SECTION = Section.of("warmup", WarmupProperties::new,
			(properties, context) -> properties.toRules(context.propertyName("warmup")));

	private WarmupSection() {
	}

}
