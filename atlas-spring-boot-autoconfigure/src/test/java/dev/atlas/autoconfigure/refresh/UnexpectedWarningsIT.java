package dev.atlas.autoconfigure.refresh;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.atlas.autoconfigure.WhoApp;
import dev.atlas.autoconfigure.ZooKeeperApps;
import dev.atlas.autoconfigure.gray.GrayProperties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.context.refresh.ContextRefresher;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A normal run logs no WARN or ERROR of Atlas's, on real applications (registered in an
 * in-process ZooKeeper): three providers in one zone, one tagged {@code v2}, reporting
 * their load; two callers with every concern Atlas has configured (lane rules, a canary
 * percentage, cluster affinity, warmup, outlier ejection, the weighted-round-robin
 * strategy, the retry budget, an in-flight limit), each calling through its four clients,
 * then refreshed twice with changes to Atlas's rules (through {@code /actuator/refresh}
 * and through Spring Cloud's {@link ContextRefresher}, which a Nacos config push and a
 * Spring Cloud Bus event call) and once without change; then a provider's shutdown (with
 * a drain). The second caller has a property source above Atlas's that sets
 * {@code spring.cloud.refresh.never-refreshable} (as a remote source of Spring Cloud's
 * bootstrap would), so that Spring Cloud rebinds Atlas's properties beans on its
 * refreshes.
 *
 * <p>
 * A log record is Atlas's when its logger is one of Atlas's classes or its text names
 * Atlas's classes ({@code dev.atlas.}) or properties ({@code atlas.}), as Spring Cloud's
 * {@code ConfigurationPropertiesRebinder} does when it cannot reset a property of Atlas's
 * properties beans. The applications log with the full logger name (Boot's default
 * pattern shortens it) so that the record's origin can be read.
 *
 * <p>
 * Seen failing on {@code GrayProperties} as it was: on the second caller's first refresh,
 * Spring Cloud's "Cannot reset property 'laneRules' on
 * dev.atlas.autoconfigure.gray.GrayProperties to its default value".
 */
@ExtendWith(OutputCaptureExtension.class)
class UnexpectedWarningsIT {

	@TempDir
	static Path directory;

	private static final String SERVICE = "provider";

	/**
	 * The console pattern of the applications: level, thread, full logger name, message,
	 * stack trace.
	 */
	private static final String PATTERN = "logging.pattern.console=%5p [%t] %c : %m%n%wEx";

	/**
	 * The start of a record in that pattern, or in Logback's own before Spring Boot sets
	 * it up ({@code 12:00:00.000 [main] WARN logger -- message}): its level and logger.
	 */
	private static final Pattern RECORD = Pattern.compile(
			"^(?:\\s*|\\d{2}:\\d{2}:\\d{2}\\.\\d{3} \\[[^]]*] )(TRACE|DEBUG|INFO|WARN|ERROR) (?:\\[[^]]*] )?(\\S+) (?::|--) ");

	@Test
	void startupCallsRefreshesAndShutdownLogNoWarningOfAtlas(CapturedOutput output) throws Exception {
		try (ZooKeeperApps apps = new ZooKeeperApps()) {
			// the one stopped at the end drains, as in production
			ConfigurableApplicationContext baseline = apps.start(WhoApp.class, SERVICE, PATTERN,
					"spring.cloud.zookeeper.discovery.metadata.zone=a", "atlas.load-report.enabled=true",
					"atlas.lifecycle.drain=500ms");
			apps.start(WhoApp.class, SERVICE, PATTERN, "spring.cloud.zookeeper.discovery.metadata.zone=a",
					"atlas.load-report.enabled=true");
			apps.start(WhoApp.class, SERVICE, PATTERN, "spring.cloud.zookeeper.discovery.metadata.zone=a",
					"spring.cloud.zookeeper.discovery.metadata.version=v2", "atlas.load-report.enabled=true");
			List<ConfigurableApplicationContext> callers = List.of(startCaller(apps, "caller"),
					// Atlas's properties beans rebound on refresh: a source above Atlas's
					// sets never-refreshable, as a remote one of Spring Cloud's bootstrap
					startCaller(apps, "rebound-caller", new RemoteNeverRefreshable()));
			callAndRefresh(callers.get(0), false);
			callAndRefresh(callers.get(1), true);
			assertThat(callers.get(1).getEnvironment().getProperty("spring.cloud.refresh.never-refreshable"))
				.as("what the second caller keeps out of rebinding, after its refreshes")
				.isEqualTo("com.zaxxer.hikari.HikariDataSource");
			baseline.close();
			for (ConfigurableApplicationContext caller : callers) {
				ZooKeeperApps.awaitInstances(caller, SERVICE, 2);
				caller.getBean(WhoApp.class).call("rest-client");
			}
		}
		List<LogRecord> records = records(output.getOut() + output.getErr());
		assertThat(records).as("Atlas's INFO records (the captured output was read)")
			.anyMatch((record) -> record.level().equals("INFO") && record.logger().startsWith("dev.atlas."));
		assertThat(records.stream().filter((record) -> record.warning() && record.atlas()).map(LogRecord::text))
			.as("WARN and ERROR records of Atlas's")
			.isEmpty();
	}

	private static ConfigurableApplicationContext startCaller(ZooKeeperApps apps, String name,
			ApplicationContextInitializer<?>... initializers) throws IOException {
		Path rules = directory.resolve(name + ".properties");
		RulesFiles.write(rules, Map.of("atlas.services." + SERVICE + ".gray.weights.v2", "10"));
		List<String> properties = new ArrayList<>(List.of(PATTERN, "spring.cloud.zookeeper.discovery.metadata.zone=a",
				"atlas.affinity.cluster=a", "atlas.gray.rules[0].tag=v2", "atlas.gray.rules[0].header=X-User-Group",
				"atlas.gray.rules[0].equals=beta", "atlas.gray.hash-key-header=X-User-Id",
				"atlas.loadbalancer.strategy=weighted-round-robin", "atlas.loadbalancer.max-in-flight-per-instance=50",
				"spring.config.import=optional:file:" + rules.toAbsolutePath(), "management.server.port=0",
				"management.endpoints.web.exposure.include=refresh,atlas,prestop,health,prometheus"));
		ConfigurableApplicationContext caller = apps.start(
				new SpringApplicationBuilder(WhoApp.class).initializers(initializers), name,
				properties.toArray(String[]::new));
		ZooKeeperApps.awaitInstances(caller, SERVICE, 3);
		return caller;
	}

	/**
	 * Calls through the four clients, refreshes twice with changes to Atlas's rules and
	 * once without change, and calls again.
	 * @param caller the caller
	 * @param rebound whether Spring Cloud rebinds Atlas's properties beans in this caller
	 */
	private static void callAndRefresh(ConfigurableApplicationContext caller, boolean rebound) throws IOException {
		Path rules = directory
			.resolve(caller.getEnvironment().getRequiredProperty("spring.application.name") + ".properties");
		WhoApp who = caller.getBean(WhoApp.class);
		for (int i = 0; i < 10; i++) {
			for (String client : List.of("rest-client", "rest-template", "web-client", "feign")) {
				who.call(client);
			}
		}
		RestClient management = RestClient.create("http://127.0.0.1:"
				+ caller.getEnvironment().getRequiredProperty("local.management.port", Integer.class));
		management.get().uri("/actuator/atlas/" + SERVICE).retrieve().toBodilessEntity();

		// a list is bound from the one source that has it: the whole rule
		RulesFiles.write(rules,
				Map.of("atlas.services." + SERVICE + ".gray.weights.v2", "50", "atlas.gray.rules[0].tag", "v2",
						"atlas.gray.rules[0].header", "X-User-Group", "atlas.gray.rules[0].equals", "gamma",
						"atlas.outlier.max-ejection-percent", "30"));
		assertThat(management.post().uri("/actuator/refresh").retrieve().body(String.class))
			.as("keys the first refresh changed")
			.contains("atlas.gray.rules[0].equals");
		assertThat(caller.getBean(GrayProperties.class).getRules().get(0).getEquals())
			.as("Atlas's GrayProperties bean, rebound or as started")
			.isEqualTo(rebound ? "gamma" : "beta");
		RulesFiles.write(rules, Map.of("atlas.services." + SERVICE + ".gray.weights.v2", "20"));
		assertThat(caller.getBean(ContextRefresher.class).refresh()).as("keys the second refresh changed")
			.contains("atlas.services." + SERVICE + ".gray.weights.v2");
		assertThat(management.post().uri("/actuator/refresh").retrieve().body(String.class))
			.as("keys a refresh without change changed")
			.isEqualTo("[]");
		for (int i = 0; i < 10; i++) {
			who.call("rest-client");
		}
	}

	/**
	 * The log records in console output of the pattern above, each with its continuation
	 * lines (a stack trace, a multi-line message).
	 * @param output the captured output
	 * @return the records, in order
	 */
	static List<LogRecord> records(String output) {
		List<LogRecord> records = new ArrayList<>();
		String level = null;
		String logger = null;
		StringBuilder text = null;
		for (String line : output.split("\\R")) {
			Matcher start = RECORD.matcher(line);
			if (start.find()) {
				if (text != null) {
					records.add(new LogRecord(level, logger, text.toString()));
				}
				level = start.group(1);
				logger = start.group(2);
				text = new StringBuilder(line);
			}
			else if (text != null) {
				text.append('\n').append(line);
			}
		}
		if (text != null) {
			records.add(new LogRecord(level, logger, text.toString()));
		}
		return records;
	}

	/**
	 * Adds a property source above Atlas's that sets
	 * {@code spring.cloud.refresh.never-refreshable} to Spring Cloud's default, as a
	 * remote source of Spring Cloud's bootstrap would be added, so that Spring Cloud
	 * rebinds Atlas's properties beans on refresh.
	 */
	public static class RemoteNeverRefreshable
			implements ApplicationContextInitializer<ConfigurableApplicationContext> {

		@Override
		public void initialize(ConfigurableApplicationContext context) {
			context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("remote",
						Map.of("spring.cloud.refresh.never-refreshable", "com.zaxxer.hikari.HikariDataSource")));
		}

	}

	/**
	 * One log record.
	 *
	 * @param level its level
	 * @param logger its logger's name
	 * @param text its lines
	 */
	record LogRecord(String level, String logger, String text) {

		boolean warning() {
			return this.level.equals("WARN") || this.level.equals("ERROR");
		}

		/** Whether Atlas logged it, or it names Atlas's classes or properties. */
		boolean atlas() {
			return this.logger.startsWith("dev.atlas.") || this.text.contains("atlas.");
		}

	}

}
