package dev.atlas.autoconfigure.propagation;

import java.util.List;

import dev.atlas.autoconfigure.settings.CallerSection;

/**
 * The caller-level section of propagation, bound with the other caller-level sections on
 * every runtime change, so that an invalid value rejects the change as a whole (the rules
 * in force stay) instead of failing the refresh. Not instantiable.
 *
 * @since 0.1.0
 */
public final class PropagationSection {

	/**
	 * {@code atlas.propagation}; {@code enabled} and {@code reactor-automatic} are read
	 * only at startup.
	 */
	public static final CallerSection<PropagationProperties> CALLER = new CallerSection<>(PropagationProperties.PREFIX,
			PropagationProperties::new, (binder, propagation, atStartup) -> {
			}, List.of(PropagationProperties.PREFIX + ".enabled", PropagationProperties.PREFIX + ".reactor-automatic"));

	private PropagationSection() {
	}

}
