package dev.atlas.autoconfigure.settings;

import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;

/**
 * A caller-level section that a concern declares: the same for every service this
 * application calls, bound from one prefix (e.g. {@code atlas.affinity}) at startup and
 * on every runtime change, into objects of {@link AtlasSettings}'s own (Spring Cloud
 * rebinds the application's {@code @ConfigurationProperties} beans in place, rejected
 * values included). An invalid value rejects a runtime change for every service. Compared
 * by identity: declare each once, as a constant, and register it as a bean. Immutable and
 * thread-safe.
 *
 * @param <C> the properties class
 * @since 0.1.0
 */
public final class CallerSection<C> {

	private final String prefix;

	private final Supplier<C> properties;

	private final Check<C> check;

	private final List<String> restartOnly;

	/**
	 * Declares a caller-level section.
	 * @param prefix the prefix, e.g. {@code atlas.affinity}
	 * @param properties a new properties object with the class defaults
	 * @param check validates what was bound, after setting back the values read only at
	 * startup
	 * @param restartOnly property names (or prefixes) under it read only at startup: a
	 * runtime change of one logs that a restart is needed
	 */
	public CallerSection(String prefix, Supplier<C> properties, Check<C> check, List<String> restartOnly) {
		this.prefix = Objects.requireNonNull(prefix, "prefix");
		this.properties = Objects.requireNonNull(properties, "properties");
		this.check = Objects.requireNonNull(check, "check");
		this.restartOnly = List.copyOf(restartOnly);
	}

	/**
	 * The prefix.
	 * @return e.g. {@code atlas.affinity}
	 */
	public String prefix() {
		return this.prefix;
	}

	/**
	 * Properties read only at startup.
	 * @return full names or prefixes, e.g. {@code atlas.affinity.enabled}
	 */
	public List<String> restartOnly() {
		return this.restartOnly;
	}

	/**
	 * Binds and checks the section.
	 * @param binder binds from the environment as it is now
	 * @param atStartup the section as bound at startup, or {@code null} at startup
	 * @return a new object
	 * @throws RuntimeException naming the property when a value is invalid
	 */
	C bind(Binder binder, @Nullable C atStartup) {
		C bound = binder.bind(this.prefix, Bindable.ofInstance(this.properties.get())).orElseGet(this.properties);
		this.check.check(binder, bound, atStartup);
		return bound;
	}

	@Override
	public String toString() {
		return "CallerSection[" + this.prefix + "]";
	}

	/**
	 * Validates a caller-level section once bound.
	 *
	 * @param <C> the properties class
	 * @since 0.1.0
	 */
	@FunctionalInterface
	public interface Check<C> {

		/**
		 * Validates, after setting back on {@code bound} the values read only at startup.
		 * @param binder binds from the environment as it is now (for checks binding alone
		 * does not make)
		 * @param bound the section as bound now
		 * @param atStartup the section as bound at startup, or {@code null} at startup
		 * @throws RuntimeException naming the property when a value is invalid
		 */
		void check(Binder binder, C bound, @Nullable C atStartup);

	}

}
