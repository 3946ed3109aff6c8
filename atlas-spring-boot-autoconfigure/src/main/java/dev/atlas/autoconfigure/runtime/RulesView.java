package dev.atlas.autoconfigure.runtime;

import java.lang.reflect.RecordComponent;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

import dev.atlas.autoconfigure.settings.Section;
import dev.atlas.autoconfigure.settings.ServiceSettings;
import dev.atlas.loadbalancer.stats.FailureStatuses;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.convert.DurationStyle;

/**
 * The rules of a service as a tree of plain values, for {@code /actuator/atlas} and for
 * the log line of a change: each rules record becomes a map of its components under
 * kebab-case names (e.g. {@code section.some-limit}, {@code section.probe.interval}),
 * durations are written as in properties ({@code 10s}), enumerations by their property
 * value. Stateless.
 */
final class RulesView {

	private RulesView() {
	}

	/**
	 * The view of a service's rules: each section's rules under the section's name (or,
	 * for a section with a flat view, each component of its rules at the top level), then
	 * what the steps add.
	 * @param settings the service's settings
	 * @param steps what the service's steps add ({@link RuntimeStep#view()}), in order
	 * @return an ordered map of plain values (strings, numbers, booleans, lists, maps)
	 */
	static Map<String, @Nullable Object> of(ServiceSettings settings, List<Map<String, @Nullable Object>> steps) {
		Map<String, @Nullable Object> view = new LinkedHashMap<>();
		for (Section<?, ?> section : settings.sections()) {
			Object rules = settings.get(section);
			if (section.isFlatView() && rules instanceof Record record) {
				view.putAll(record(record));
			}
			else {
				view.put(section.name(), value(rules));
			}
		}
		steps.forEach((entries) -> entries.forEach((name, value) -> view.put(name, value(value))));
		return view;
	}

	/**
	 * What differs between two views, one entry per changed leaf.
	 * @param before the view before
	 * @param after the view after
	 * @return e.g. {@code section.percentages {v2=10.0} → {v2=50.0}}, in name order;
	 * empty when nothing differs
	 */
	static List<String> changes(Map<String, @Nullable Object> before, Map<String, @Nullable Object> after) {
		Map<String, @Nullable Object> old = new LinkedHashMap<>();
		Map<String, @Nullable Object> now = new LinkedHashMap<>();
		flatten("", before, old);
		flatten("", after, now);
		TreeSet<String> names = new TreeSet<>(old.keySet());
		names.addAll(now.keySet());
		List<String> changes = new ArrayList<>();
		for (String name : names) {
			Object was = old.get(name);
			Object is = now.get(name);
			if (!Objects.equals(was, is)) {
				changes.add(name + " " + was + " → " + is);
			}
		}
		return changes;
	}

	private static void flatten(String prefix, Map<String, @Nullable Object> view, Map<String, @Nullable Object> into) {
		view.forEach((name, value) -> {
			String path = prefix.isEmpty() ? name : prefix + "." + name;
			if (value instanceof Map<?, ?> map && !path.endsWith("percentages")) {
				@SuppressWarnings("unchecked")
				Map<String, @Nullable Object> nested = (Map<String, @Nullable Object>) map;
				flatten(path, nested, into);
			}
			else {
				into.put(path, value);
			}
		});
	}

	private static Map<String, @Nullable Object> record(Record record) {
		Map<String, @Nullable Object> view = new LinkedHashMap<>();
		for (RecordComponent component : record.getClass().getRecordComponents()) {
			try {
				view.put(kebab(component.getName()), value(component.getAccessor().invoke(record)));
			}
			catch (ReflectiveOperationException ex) {
				throw new IllegalStateException("Cannot read " + component, ex);
			}
		}
		return view;
	}

	private static @Nullable Object value(@Nullable Object value) {
		if (value instanceof Record nested) {
			return record(nested);
		}
		if (value instanceof Duration duration) {
			return DurationStyle.SIMPLE.print(duration, largestExactUnit(duration));
		}
		if (value instanceof FailureStatuses statuses) {
			return statuses.entries();
		}
		if (value instanceof Enum<?> || value instanceof CharSequence) {
			return value.toString();
		}
		if (value instanceof Map<?, ?> map) {
			Map<String, @Nullable Object> copy = new LinkedHashMap<>();
			map.forEach((key, element) -> copy.put(String.valueOf(key), value(element)));
			return copy;
		}
		if (value instanceof List<?> list) {
			// in order: a list of rules may be evaluated in order
			return list.stream().map((element) -> String.valueOf(value(element))).toList();
		}
		if (value instanceof Collection<?> collection) {
			return collection.stream().map((element) -> String.valueOf(value(element))).sorted().toList();
		}
		return value;
	}

	private static ChronoUnit largestExactUnit(Duration duration) {
		for (ChronoUnit unit : List.of(ChronoUnit.HOURS, ChronoUnit.MINUTES, ChronoUnit.SECONDS)) {
			if (!duration.isZero() && duration.toNanos() % unit.getDuration().toNanos() == 0) {
				return unit;
			}
		}
		return (duration.toNanos() % 1_000_000 == 0) ? ChronoUnit.MILLIS : ChronoUnit.NANOS;
	}

	private static String kebab(String camel) {
		StringBuilder name = new StringBuilder(camel.length() + 4);
		for (int i = 0; i < camel.length(); i++) {
			char c = camel.charAt(i);
			if (Character.isUpperCase(c)) {
				name.append('-').append(Character.toLowerCase(c));
			}
			else {
				name.append(c);
			}
		}
		return name.toString();
	}

}
