package dev.atlas.autoconfigure.settings;

import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

/**
 * A section of the rules of one service that a concern declares: bound from
 * {@code atlas.<name>} overlaid by {@code atlas.services.<service-id>.<name>}, turned
 * into the concern's immutable rules record, and used as the typed key of those rules in
 * {@link ServiceSettings}. Compared by identity: declare each section once, as a
 * constant, and register it as a bean so that {@link AtlasSettings} resolves it.
 * Immutable and thread-safe.
 *
 * @param <P> the properties class the section is bound into (mutable, with the class
 * defaults when new)
 * @param <R> the rules record (immutable, value-equal, validated in its constructor)
 * @since 0.1.0
 */
public final class Section<P, R> {

	private final String name;

	private final Supplier<P> properties;

	private final Set<String> perServiceOnly;

	private final Rules<P, R> rules;

	private final boolean flatView;

	private Section(String name, Supplier<P> properties, Set<String> perServiceOnly, Rules<P, R> rules,
			boolean flatView) {
		this.name = Objects.requireNonNull(name, "name");
		this.properties = Objects.requireNonNull(properties, "properties");
		this.perServiceOnly = Set.copyOf(perServiceOnly);
		this.rules = Objects.requireNonNull(rules, "rules");
		this.flatView = flatView;
	}

	/**
	 * Declares a section.
	 * @param name the name under {@code atlas} and under
	 * {@code atlas.services.<service-id>}, e.g. {@code warmup}
	 * @param properties a new properties object with the class defaults
	 * @param rules how the bound properties of one service become its rules
	 * @param <P> the properties class
	 * @param <R> the rules record
	 * @return the section
	 */
	public static <P, R> Section<P, R> of(String name, Supplier<P> properties, Rules<P, R> rules) {
		return new Section<>(name, properties, Set.of(), rules, false);
	}

	/**
	 * The same section with properties read only from the service's section, never from
	 * the global one (where they may mean something else, or nothing).
	 * @param names the property names under the section, e.g. {@code weights}
	 * @return a new section (a different key)
	 */
	public Section<P, R> perServiceOnly(String... names) {
		return new Section<>(this.name, this.properties, Set.of(names), this.rules, this.flatView);
	}

	/**
	 * The same section whose rules record shows its components at the top level of the
	 * view of a service's rules ({@code /actuator/atlas/{service}}, the change log line)
	 * rather than under the section's name.
	 * @return a new section (a different key)
	 */
	public Section<P, R> flatView() {
		return new Section<>(this.name, this.properties, this.perServiceOnly, this.rules, true);
	}

	/**
	 * The name under {@code atlas} and under {@code atlas.services.<service-id>}.
	 * @return e.g. {@code warmup}
	 */
	public String name() {
		return this.name;
	}

	/**
	 * A new properties object with the class defaults.
	 * @return never {@code null}
	 */
	public P newProperties() {
		return this.properties.get();
	}

	/**
	 * Properties read only from the service's section.
	 * @return names under the section; empty for none
	 */
	public Set<String> perServiceOnly() {
		return this.perServiceOnly;
	}

	/**
	 * Whether the rules record's components are shown at the top level of a service's
	 * view.
	 * @return {@code false} to show the record under {@link #name()}
	 */
	public boolean isFlatView() {
		return this.flatView;
	}

	/**
	 * The rules of one service.
	 * @param properties the section bound for the service
	 * @param context the service and the caller-level settings
	 * @return the rules, never {@code null}
	 * @throws IllegalArgumentException naming the property when a value is invalid
	 */
	public R rules(P properties, SectionContext context) {
		return Objects.requireNonNull(this.rules.rules(properties, context), this.name);
	}

	@Override
	public String toString() {
		return "Section[" + this.name + "]";
	}

	/**
	 * How the bound properties of one service become its rules.
	 *
	 * @param <P> the properties class
	 * @param <R> the rules record
	 * @since 0.1.0
	 */
	@FunctionalInterface
	public interface Rules<P, R> {

		/**
		 * Makes the rules of one service.
		 * @param properties the section bound for the service
		 * @param context the service, its property names, the caller-level settings
		 * @return the rules
		 * @throws IllegalArgumentException naming the property when a value is invalid
		 */
		R rules(P properties, SectionContext context);

	}

}
