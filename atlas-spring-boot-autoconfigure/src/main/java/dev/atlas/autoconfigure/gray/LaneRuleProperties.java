package dev.atlas.autoconfigure.gray;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import dev.atlas.loadbalancer.routing.LaneRule;
import org.jspecify.annotations.Nullable;

/**
 * One lane rule, {@code atlas.gray.rules[n].*}: exactly one of {@code header},
 * {@code cookie}, {@code query} names what is read; exactly one of {@code equals},
 * {@code in}, {@code regex} says how it is compared; {@code tag} is the tag a matching
 * request wants. For example {@code tag: v2, header: X-User-Group, equals: beta}. Mutable
 * while being bound, not thread-safe.
 *
 * @since 0.1.0
 */
public class LaneRuleProperties {

	/** The keys a rule may have, in the order the documentation lists them. */
	public static final String ALLOWED_KEYS = "tag, header | cookie | query, equals | in | regex";

	/** The tag a matching request wants, e.g. v2. */
	private @Nullable String tag;

	/** Request header whose first value is compared (name case-insensitive). */
	private @Nullable String header;

	/** Cookie whose value is compared (name case-sensitive). */
	private @Nullable String cookie;

	/**
	 * Query parameter whose first value, URL-decoded, is compared (name case-sensitive).
	 */
	private @Nullable String query;

	/** Matches when the value equals this one (case-sensitive). */
	private @Nullable String equals;

	/** Matches when the value equals one of these (case-sensitive). */
	private @Nullable List<String> in;

	/** Matches when this regular expression (java.util.regex) matches the whole value. */
	private @Nullable String regex;

	/**
	 * The rule these properties describe.
	 * @param property the rule's property name, e.g. {@code atlas.gray.rules[0]}, for
	 * messages
	 * @return the rule
	 * @throws IllegalArgumentException naming the property and what is allowed when the
	 * rule names no or several attributes or matchers, or a value is invalid
	 */
	LaneRule toRule(String property) {
		List<String> sources = new ArrayList<>();
		LaneRule.Source source = null;
		String name = null;
		for (LaneRule.Source candidate : LaneRule.Source.values()) {
			String value = switch (candidate) {
				case HEADER -> this.header;
				case COOKIE -> this.cookie;
				case QUERY -> this.query;
			};
			if (value != null) {
				sources.add(candidate.value());
				source = candidate;
				name = value;
			}
		}
		List<String> matches = new ArrayList<>();
		LaneRule.Match match = null;
		List<String> values = null;
		if (this.equals != null) {
			matches.add(LaneRule.Match.EQUALS.value());
			match = LaneRule.Match.EQUALS;
			values = List.of(this.equals);
		}
		if (this.in != null) {
			matches.add(LaneRule.Match.IN.value());
			match = LaneRule.Match.IN;
			values = this.in;
		}
		if (this.regex != null) {
			matches.add(LaneRule.Match.REGEX.value());
			match = LaneRule.Match.REGEX;
			values = List.of(this.regex);
		}
		if (this.tag == null) {
			throw invalid(property, "a rule needs a tag", "e.g. tag: v2");
		}
		if (sources.size() != 1) {
			throw invalid(property,
					sources.isEmpty() ? "a rule needs what it reads" : "a rule reads one attribute, not " + sources,
					"exactly one of header, cookie, query");
		}
		if (matches.size() != 1) {
			throw invalid(property,
					matches.isEmpty() ? "a rule needs a matcher" : "a rule has one matcher, not " + matches,
					"exactly one of equals, in, regex");
		}
		try {
			return new LaneRule(this.tag, Objects.requireNonNull(source, "one source"),
					Objects.requireNonNull(name, "one source"), Objects.requireNonNull(match, "one matcher"),
					Objects.requireNonNull(values, "one matcher"));
		}
		catch (IllegalArgumentException ex) {
			throw invalid(property, ex.getMessage(), "keys " + ALLOWED_KEYS);
		}
	}

	private static IllegalArgumentException invalid(String property, @Nullable String problem, String allowed) {
		return new IllegalArgumentException("Invalid " + property + ": " + problem + " (" + allowed + ")");
	}

	public @Nullable String getTag() {
		return this.tag;
	}

	public void setTag(@Nullable String tag) {
		this.tag = tag;
	}

	public @Nullable String getHeader() {
		return this.header;
	}

	public void setHeader(@Nullable String header) {
		this.header = header;
	}

	public @Nullable String getCookie() {
		return this.cookie;
	}

	public void setCookie(@Nullable String cookie) {
		this.cookie = cookie;
	}

	public @Nullable String getQuery() {
		return this.query;
	}

	public void setQuery(@Nullable String query) {
		this.query = query;
	}

	public @Nullable String getEquals() {
		return this.equals;
	}

	public void setEquals(@Nullable String equals) {
		this.equals = equals;
	}

	public @Nullable List<String> getIn() {
		return this.in;
	}

	public void setIn(@Nullable List<String> in) {
		this.in = in;
	}

	public @Nullable String getRegex() {
		return this.regex;
	}

	public void setRegex(@Nullable String regex) {
		this.regex = regex;
	}

}
