package dev.atlas.loadbalancer.routing;

import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import java.util.stream.Collectors;

import dev.atlas.loadbalancer.spi.RoutingAttributes;
import dev.atlas.loadbalancer.support.OncePerKeyLog;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One lane rule: when an attribute of a request (a header, a cookie or a query parameter)
 * matches, the request wants {@link #tag()}. For example "header {@code X-User-Group}
 * equals {@code beta} → {@code v2}". Rules are evaluated in order by {@link #firstMatch};
 * the first that matches wins.
 *
 * <p>
 * Values are compared as sent, case-sensitively: {@link Match#EQUALS} and
 * {@link Match#IN} compare the trimmed header value (cookie and query values as they
 * are); {@link Match#REGEX} must match the whole value
 * ({@link java.util.regex.Matcher#matches()}). Only the first value of a repeated header
 * or parameter is looked at. Immutable and thread-safe; equal when tag, attribute, name,
 * match and values are.
 *
 * @since 0.1.0
 */
public final class LaneRule {

	/**
	 * The longest value (characters) a regex rule looks at; longer values do not match.
	 */
	public static final int MAX_REGEX_INPUT = 1024;

	/** The most characters a regex match may read before it is abandoned as no match. */
	public static final int MAX_REGEX_STEPS = 100_000;

	private static final Logger log = LoggerFactory.getLogger(LaneRule.class);

	private static final OncePerKeyLog warnings = new OncePerKeyLog();

	/** Where a rule reads its value. */
	public enum Source {

		/** A request header; names are case-insensitive. */
		HEADER,

		/** A cookie; names are case-sensitive. */
		COOKIE,

		/** A query parameter of the URL, URL-decoded; names are case-sensitive. */
		QUERY;

		/**
		 * The name used in configuration.
		 * @return {@code header}, {@code cookie} or {@code query}
		 */
		public String value() {
			return name().toLowerCase(Locale.ROOT);
		}

	}

	/** How a rule compares the value. */
	public enum Match {

		/** Equal to one value. */
		EQUALS,

		/** Equal to one of a set of values. */
		IN,

		/** Matched in whole by a regular expression ({@link Pattern} syntax). */
		REGEX;

		/**
		 * The name used in configuration.
		 * @return {@code equals}, {@code in} or {@code regex}
		 */
		public String value() {
			return name().toLowerCase(Locale.ROOT);
		}

	}

	private final String tag;

	private final Source source;

	private final String name;

	private final String lookupName;

	private final Match match;

	private final List<String> values;

	private final Set<String> valueSet;

	private final @Nullable Pattern pattern;

	/**
	 * Creates a rule.
	 * @param tag the tag a matching request wants, any case (stored lower-cased, as every
	 * tag); not blank
	 * @param source where the value is read
	 * @param name the header, cookie or parameter name; not blank
	 * @param match how the value is compared
	 * @param values one value for {@link Match#EQUALS} and {@link Match#REGEX} (the
	 * expression), one or more for {@link Match#IN}; none blank
	 * @throws IllegalArgumentException when the tag, the name or a value is blank, the
	 * number of values does not fit the match, or the expression does not compile (the
	 * message says which)
	 */
	public LaneRule(String tag, Source source, String name, Match match, Collection<String> values) {
		String normalized = GrayRules.normalize(tag);
		if (normalized == null) {
			throw new IllegalArgumentException("the tag must not be blank");
		}
		Objects.requireNonNull(source, "source");
		Objects.requireNonNull(match, "match");
		if (name == null || name.isBlank()) {
			throw new IllegalArgumentException("the " + source.value() + " name must not be blank");
		}
		List<String> kept = values.stream().map((value) -> (value != null) ? value.trim() : "").toList();
		if (kept.isEmpty() || kept.stream().anyMatch(String::isEmpty)) {
			throw new IllegalArgumentException("'" + match.value() + "' needs "
					+ ((match == Match.IN) ? "one or more values, none blank" : "a value, not blank"));
		}
		if (match != Match.IN && kept.size() > 1) {
			throw new IllegalArgumentException("'" + match.value() + "' takes one value, got " + kept);
		}
		this.tag = normalized;
		this.source = source;
		this.name = name.trim();
		this.lookupName = (source == Source.HEADER) ? this.name.toLowerCase(Locale.ROOT) : this.name;
		this.match = match;
		this.values = kept;
		this.valueSet = Set.copyOf(kept);
		if (match == Match.REGEX) {
			try {
				this.pattern = Pattern.compile(kept.get(0));
			}
			catch (PatternSyntaxException ex) {
				throw new IllegalArgumentException("the regex '" + kept.get(0) + "' is invalid: " + ex.getDescription()
						+ " near index " + ex.getIndex(), ex);
			}
		}
		else {
			this.pattern = null;
		}
	}

	/**
	 * The tag of the first rule that matches a request.
	 * @param rules the rules in order; may be empty
	 * @param request the request's attributes
	 * @return the tag (lower case), or {@code null} when no rule matches
	 */
	public static @Nullable String firstMatch(LaneRule[] rules, RoutingAttributes request) {
		for (LaneRule rule : rules) {
			if (rule.matches(request)) {
				return rule.tag;
			}
		}
		return null;
	}

	/**
	 * Whether a request matches this rule. Allocates nothing for a header rule compared
	 * by {@code equals} or {@code in}; a regex allocates a
	 * {@link java.util.regex.Matcher} when the attribute is present, a query rule the
	 * decoded value.
	 * @param request the request's attributes
	 * @return {@code true} when the attribute is present and matches
	 */
	public boolean matches(RoutingAttributes request) {
		String value = switch (this.source) {
			case HEADER -> request.header(this.lookupName);
			case COOKIE -> request.cookie(this.lookupName);
			case QUERY -> request.queryParameter(this.lookupName);
		};
		if (value == null) {
			return false;
		}
		return switch (this.match) {
			case EQUALS -> this.values.get(0).equals(value);
			case IN -> this.valueSet.contains(value);
			case REGEX -> regexMatches(value);
		};
	}

	/**
	 * A regular expression on a value the client chose, bounded: a value longer than
	 * {@value #MAX_REGEX_INPUT} characters does not match, and a match that reads more
	 * than {@value #MAX_REGEX_STEPS} characters (a backtracking expression) is abandoned
	 * as no match, with one WARN per rule, instead of holding the request thread.
	 */
	private boolean regexMatches(String value) {
		if (value.length() > MAX_REGEX_INPUT) {
			return false;
		}
		try {
			return Objects.requireNonNull(this.pattern, "a regex rule has a pattern")
				.matcher(new Budgeted(value))
				.matches();
		}
		catch (TooCostly ex) {
			warnings.once(toString(),
					(rule) -> log.warn(
							"Lane rule '{}' gave up matching a value after {} steps and counts it as no match: "
									+ "simplify the regex (nested or overlapping repetition backtracks)",
							rule, MAX_REGEX_STEPS));
			return false;
		}
	}

	/**
	 * The tag a matching request wants.
	 * @return lower case, not blank
	 */
	public String tag() {
		return this.tag;
	}

	/**
	 * Where the value is read.
	 * @return the source
	 */
	public Source source() {
		return this.source;
	}

	/**
	 * The header, cookie or parameter name, as configured (trimmed).
	 * @return the name
	 */
	public String name() {
		return this.name;
	}

	/**
	 * How the value is compared.
	 * @return the match
	 */
	public Match match() {
		return this.match;
	}

	/**
	 * The values compared with, trimmed, in configured order (the expression for
	 * {@link Match#REGEX}).
	 * @return an unmodifiable list of one or more values
	 */
	public List<String> values() {
		return this.values;
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return other instanceof LaneRule rule && this.tag.equals(rule.tag) && this.source == rule.source
				&& this.lookupName.equals(rule.lookupName) && this.match == rule.match
				&& this.values.equals(rule.values);
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.tag, this.source, this.lookupName, this.match, this.values);
	}

	/**
	 * E.g. {@code header X-User-Group equals beta → v2},
	 * {@code cookie canary in [1, true] → v2}.
	 * @return a one-line description
	 */
	@Override
	public String toString() {
		String compared = (this.match == Match.IN) ? this.values.stream().collect(Collectors.joining(", ", "[", "]"))
				: this.values.get(0);
		return this.source.value() + " " + this.name + " " + this.match.value() + " " + compared + " → " + this.tag;
	}

	/** Thrown when a regex match has read {@link #MAX_REGEX_STEPS} characters. */
	private static final class TooCostly extends RuntimeException {

		private static final long serialVersionUID = 1L;

		private static final TooCostly INSTANCE = new TooCostly();

		private TooCostly() {
			super(null, null, false, false);
		}

	}

	/** A value that counts the characters the regex engine reads. */
	private static final class Budgeted implements CharSequence {

		private final String value;

		private int steps;

		Budgeted(String value) {
			this.value = value;
		}

		@Override
		public int length() {
			return this.value.length();
		}

		@Override
		public char charAt(int index) {
			if (++this.steps > MAX_REGEX_STEPS) {
				throw TooCostly.INSTANCE;
			}
			return this.value.charAt(index);
		}

		@Override
		public CharSequence subSequence(int start, int end) {
			return this.value.subSequence(start, end);
		}

		@Override
		public String toString() {
			return this.value;
		}

	}

}
