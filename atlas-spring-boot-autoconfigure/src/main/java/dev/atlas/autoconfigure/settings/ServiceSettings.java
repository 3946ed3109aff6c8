package dev.atlas.autoconfigure.settings;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * What applies to calls to one service: the rules of every registered {@link Section},
 * each {@code atlas.<section>.*} overlaid by
 * {@code atlas.services.<serviceId>.<section>.*} and validated. Equal when every
 * section's rules are equal. Immutable and thread-safe. Obtained from
 * {@link AtlasSettings#settingsFor(String)}.
 *
 * @since 0.1.0
 */
public final class ServiceSettings {

	private final Map<Section<?, ?>, Object> rules;

	/**
	 * Creates the settings.
	 * @param rules each section's rules, in the sections' order
	 * @throws NullPointerException if a section or rules is {@code null}
	 */
	public ServiceSettings(Map<Section<?, ?>, Object> rules) {
		Map<Section<?, ?>, Object> copy = new LinkedHashMap<>();
		rules.forEach((section, value) -> copy.put(Objects.requireNonNull(section, "section"),
				Objects.requireNonNull(value, "rules")));
		this.rules = Collections.unmodifiableMap(copy);
	}

	/**
	 * The rules of one section.
	 * @param section a registered section
	 * @param <R> its rules record
	 * @return never {@code null}
	 * @throws IllegalArgumentException if the section is not registered
	 */
	@SuppressWarnings("unchecked")
	public <R> R get(Section<?, R> section) {
		Object value = this.rules.get(section);
		if (value == null) {
			throw new IllegalArgumentException(section + " is not registered");
		}
		return (R) value;
	}

	/**
	 * The sections, in order.
	 * @return do not modify
	 */
	public Set<Section<?, ?>> sections() {
		return this.rules.keySet();
	}

	/**
	 * Whether the rules of one section differ.
	 * @param other other settings
	 * @param section a section
	 * @return {@code true} when the section's rules are not equal (or one lacks it)
	 */
	public boolean differs(ServiceSettings other, Section<?, ?> section) {
		return !Objects.equals(this.rules.get(section), other.rules.get(section));
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return this == other || (other instanceof ServiceSettings settings && this.rules.equals(settings.rules));
	}

	@Override
	public int hashCode() {
		return this.rules.hashCode();
	}

	@Override
	public String toString() {
		StringBuilder text = new StringBuilder("ServiceSettings[");
		this.rules.forEach((section, value) -> {
			if (text.length() > "ServiceSettings[".length()) {
				text.append(", ");
			}
			text.append(section.name()).append('=').append(value);
		});
		return text.append(']').toString();
	}

}
