package dev.atlas.loadbalancer.orca;

import org.jspecify.annotations.Nullable;

/**
 * One load report of an instance, as ORCA (Open Request Cost Aggregation, the format of
 * gRPC's and Envoy's load reports) defines its fields: the instance's CPU utilization,
 * its application-defined utilization, its rate of requests and its rate of errors. A
 * field the report does not carry is {@code 0}, as in ORCA's protobuf.
 *
 * @param cpuUtilization CPU utilization, a ratio (usually 0..1; above 1 when the instance
 * is over its quota), {@code >= 0}
 * @param applicationUtilization the application's own utilization, {@code >= 0};
 * preferred over the CPU's when {@code > 0} (gRFC A58)
 * @param rps requests per second the instance served ({@code rps_fractional}),
 * {@code >= 0}
 * @param eps errors per second it answered, {@code >= 0}
 * @since 0.1.0
 */
public record LoadReport(double cpuUtilization, double applicationUtilization, double rps, double eps) {

	/** The response header carrying a report. */
	public static final String HEADER = "endpoint-load-metrics";

	/**
	 * The request header asking for a report, with the format wanted ({@code TEXT} or
	 * {@code JSON}), as Triton and vLLM read it.
	 */
	public static final String FORMAT_HEADER = "endpoint-load-metrics-format";

	/**
	 * Validates.
	 * @throws IllegalArgumentException if a field is negative, NaN or infinite
	 */
	public LoadReport {
		check("cpu_utilization", cpuUtilization);
		check("application_utilization", applicationUtilization);
		check("rps_fractional", rps);
		check("eps", eps);
	}

	private static void check(String name, double value) {
		if (!(value >= 0) || Double.isInfinite(value)) {
			throw new IllegalArgumentException(name + " must be finite and >= 0, was " + value);
		}
	}

	/**
	 * The utilization the weight is computed from: the application's when it reports one,
	 * else the CPU's (gRFC A58).
	 * @return a ratio, {@code >= 0}
	 */
	public double utilization() {
		return (this.applicationUtilization > 0) ? this.applicationUtilization : this.cpuUtilization;
	}

	/**
	 * The header's value for this report in ORCA's native HTTP format:
	 * {@code TEXT cpu_utilization=0.5, rps_fractional=10.0, eps=0.0}, numbers in Java's
	 * shortest exact form ({@code 1.0E-4} for a very small one) (plus
	 * {@code application_utilization} when {@code > 0}).
	 * @return the value
	 */
	public String toText() {
		StringBuilder text = new StringBuilder(96).append("TEXT cpu_utilization=").append(format(this.cpuUtilization));
		if (this.applicationUtilization > 0) {
			text.append(", application_utilization=").append(format(this.applicationUtilization));
		}
		return text.append(", rps_fractional=")
			.append(format(this.rps))
			.append(", eps=")
			.append(format(this.eps))
			.toString();
	}

	/**
	 * The header's value for this report in ORCA's JSON format (the protobuf's JSON
	 * mapping): {@code JSON {"cpu_utilization":0.5,"rps_fractional":10.0,"eps":0.0}}.
	 * @return the value
	 */
	public String toJson() {
		StringBuilder json = new StringBuilder(96).append("JSON {\"cpu_utilization\":")
			.append(format(this.cpuUtilization));
		if (this.applicationUtilization > 0) {
			json.append(",\"application_utilization\":").append(format(this.applicationUtilization));
		}
		return json.append(",\"rps_fractional\":")
			.append(format(this.rps))
			.append(",\"eps\":")
			.append(format(this.eps))
			.append('}')
			.toString();
	}

	/**
	 * Java's shortest exact decimal form (no rounding: a small utilization keeps its
	 * digits).
	 */
	private static String format(double value) {
		return Double.toString(value);
	}

	/**
	 * Reads the value of an {@code endpoint-load-metrics} header. Accepted:
	 * <ul>
	 * <li>{@code TEXT name=value, name=value} (ORCA's native HTTP format), also without
	 * the {@code TEXT} prefix and with {@code :} instead of {@code =} (Envoy's older
	 * format);</li>
	 * <li>{@code JSON {...}} (the protobuf's JSON mapping, field names in snake case or
	 * lower camel case); nested objects ({@code named_metrics}, {@code utilization},
	 * {@code request_cost}) are skipped.</li>
	 * </ul>
	 * Fields read: {@code cpu_utilization}, {@code application_utilization},
	 * {@code rps_fractional}, {@code eps}; others ({@code mem_utilization},
	 * {@code named_metrics.*}) are ignored. Not accepted: the {@code BIN} format (base64
	 * protobuf), a field named twice, a value that is not a finite number {@code >= 0}.
	 * @param value the header's value; may be {@code null}
	 * @return the report, or {@code null} when the value is absent, malformed or in a
	 * format not accepted
	 */
	public static @Nullable LoadReport parse(@Nullable String value) {
		if (value == null) {
			return null;
		}
		String trimmed = value.strip();
		if (trimmed.isEmpty()) {
			return null;
		}
		try {
			if (startsWithIgnoreCase(trimmed, "JSON ")) {
				return Fields.fromJson(trimmed.substring(5).strip());
			}
			if (trimmed.startsWith("{")) {
				return Fields.fromJson(trimmed);
			}
			if (startsWithIgnoreCase(trimmed, "TEXT ")) {
				return Fields.fromText(trimmed.substring(5));
			}
			if (startsWithIgnoreCase(trimmed, "BIN ")) {
				return null;
			}
			return Fields.fromText(trimmed);
		}
		catch (IllegalArgumentException ex) {
			return null;
		}
	}

	private static boolean startsWithIgnoreCase(String value, String prefix) {
		return value.regionMatches(true, 0, prefix, 0, prefix.length());
	}

	/** The fields read so far; rejects a field named twice. */
	private static final class Fields {

		private double cpu = -1;

		private double application = -1;

		private double rps = -1;

		private double eps = -1;

		static LoadReport fromText(String text) {
			Fields fields = new Fields();
			for (String entry : text.split(",")) {
				String pair = entry.strip();
				if (pair.isEmpty()) {
					continue;
				}
				int equals = pair.indexOf('=');
				int colon = pair.indexOf(':');
				int separator = (equals < 0) ? colon : (colon < 0) ? equals : Math.min(equals, colon);
				if (separator <= 0) {
					throw new IllegalArgumentException("not name=value: " + pair);
				}
				fields.put(pair.substring(0, separator).strip(), pair.substring(separator + 1).strip());
			}
			return fields.report();
		}

		static LoadReport fromJson(String json) {
			Fields fields = new Fields();
			JsonScanner scanner = new JsonScanner(json);
			scanner.expect('{');
			if (scanner.peek() == '}') {
				return fields.report();
			}
			while (true) {
				String name = scanner.string();
				scanner.expect(':');
				if (scanner.peek() == '{' || scanner.peek() == '[') {
					scanner.skipValue();
				}
				else {
					fields.put(name, scanner.scalar());
				}
				char next = scanner.next();
				if (next == '}') {
					scanner.end();
					return fields.report();
				}
				if (next != ',') {
					throw new IllegalArgumentException("expected , or } in " + json);
				}
			}
		}

		void put(String name, String value) {
			switch (name) {
				case "cpu_utilization", "cpuUtilization" -> this.cpu = once(name, this.cpu, value);
				case "application_utilization", "applicationUtilization" ->
					this.application = once(name, this.application, value);
				case "rps_fractional", "rpsFractional" -> this.rps = once(name, this.rps, value);
				case "eps" -> this.eps = once(name, this.eps, value);
				default -> {
					// mem_utilization, named_metrics.*, and what later versions add
				}
			}
		}

		private static double once(String name, double previous, String value) {
			if (previous >= 0) {
				throw new IllegalArgumentException(name + " given twice");
			}
			double parsed = Double.parseDouble(value);
			if (!(parsed >= 0) || Double.isInfinite(parsed)) {
				throw new IllegalArgumentException(name + " must be finite and >= 0");
			}
			return parsed;
		}

		LoadReport report() {
			return new LoadReport(Math.max(0, this.cpu), Math.max(0, this.application), Math.max(0, this.rps),
					Math.max(0, this.eps));
		}

	}

	/** Just enough of JSON for one flat object of numbers, skipping nested values. */
	private static final class JsonScanner {

		private final String json;

		private int at;

		JsonScanner(String json) {
			this.json = json;
		}

		char peek() {
			skipSpace();
			if (this.at >= this.json.length()) {
				throw new IllegalArgumentException("unexpected end of " + this.json);
			}
			return this.json.charAt(this.at);
		}

		char next() {
			char c = peek();
			this.at++;
			return c;
		}

		void expect(char expected) {
			if (next() != expected) {
				throw new IllegalArgumentException("expected " + expected + " in " + this.json);
			}
		}

		void end() {
			skipSpace();
			if (this.at != this.json.length()) {
				throw new IllegalArgumentException("trailing text in " + this.json);
			}
		}

		String string() {
			expect('"');
			int start = this.at;
			while (this.at < this.json.length() && this.json.charAt(this.at) != '"') {
				if (this.json.charAt(this.at) == '\\') {
					this.at++;
				}
				this.at++;
			}
			if (this.at >= this.json.length()) {
				throw new IllegalArgumentException("unterminated string in " + this.json);
			}
			return this.json.substring(start, this.at++);
		}

		/** A number, or a quoted one (the protobuf JSON mapping allows both). */
		String scalar() {
			if (peek() == '"') {
				return string();
			}
			int start = this.at;
			while (this.at < this.json.length() && ",}] \t\r\n".indexOf(this.json.charAt(this.at)) < 0) {
				this.at++;
			}
			return this.json.substring(start, this.at);
		}

		void skipValue() {
			char open = next();
			char close = (open == '{') ? '}' : ']';
			int depth = 1;
			while (depth > 0) {
				if (this.at >= this.json.length()) {
					throw new IllegalArgumentException("unterminated value in " + this.json);
				}
				char c = this.json.charAt(this.at);
				if (c == '"') {
					string();
					continue;
				}
				if (c == open) {
					depth++;
				}
				else if (c == close) {
					depth--;
				}
				this.at++;
			}
		}

		private void skipSpace() {
			while (this.at < this.json.length() && Character.isWhitespace(this.json.charAt(this.at))) {
				this.at++;
			}
		}

	}

}
