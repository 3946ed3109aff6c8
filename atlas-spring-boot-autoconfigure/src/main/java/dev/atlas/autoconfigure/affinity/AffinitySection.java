package dev.atlas.autoconfigure.affinity;

import java.util.List;

import dev.atlas.autoconfigure.settings.CallerSection;

/**
 * The caller-level section of cluster affinity, the same for every service called. Not
 * instantiable.
 *
 * @since 0.1.0
 */
public final class AffinitySection {

	/**
	 * {@code atlas.affinity}; {@code enabled} is read only at startup.
	 */
	public static final CallerSection<AffinityProperties> CALLER = new CallerSection<>(AffinityProperties.PREFIX,
			AffinityProperties::new, (binder, affinity, atStartup) -> affinity.afterPropertiesSet(),
			List.of(AffinityProperties.PREFIX + ".enabled"));

	private AffinitySection() {
	}

}
