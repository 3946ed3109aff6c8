package dev.atlas.eureka;

import java.time.Duration;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An application whose only {@code RestClient.Builder} is {@code @LoadBalanced} hands it
 * to Eureka's own client, which then cannot reach the server (spring-cloud-netflix#4591):
 * Atlas says so at startup, naming the fix; with a plain {@code @Primary} builder beside
 * it ({@link WhoApp}) it says nothing.
 */
@ExtendWith(OutputCaptureExtension.class)
class EurekaTransportCheckIT {

	private static final String WARNING = "Every RestClient.Builder bean of this application is @LoadBalanced";

	private static EurekaApps apps;

	@BeforeAll
	static void start() {
		apps = new EurekaApps();
	}

	@AfterAll
	static void stop() {
		apps.close();
	}

	@Test
	void onlyALoadBalancedBuilderIsReported(CapturedOutput output) {
		apps.start(LoadBalancedOnlyApp.class, "lb-only");

		assertThat(output).contains(WARNING + " (loadBalancedRestClientBuilder)");
	}

	@Test
	void aPrimaryPlainBuilderBesideItIsNot(CapturedOutput output) {
		apps.start(WhoApp.class, "with-plain");

		assertThat(output).doesNotContain(WARNING);
	}

	@Test
	void aDrainShorterThanTheFetchIntervalIsReportedAtStartup(CapturedOutput output) {
		// EurekaApps: fetch every second, no drain
		apps.start(WhoApp.class, "no-drain");

		assertThat(output).contains(
				"atlas.lifecycle.drain (0 ms) is shorter than eureka.client.registry-fetch-interval-seconds (1 s)");
	}

	@Test
	void closedItLeavesNoEurekaClientRunning(CapturedOutput output) {
		Set<Long> before = liveThreads();
		ConfigurableApplicationContext app = apps.start(LoadBalancedOnlyApp.class, "lb-only-closed");
		// its Eureka client retries its registration every second through the load
		// balancer, on its own thread, and goes on while the application closes: Spring
		// Cloud's load balancer factory created a context again for such a call, which
		// created a second Eureka client, never shut down
		await().atMost(Duration.ofSeconds(20))
			.until(() -> output.getOut()
				.lines()
				.anyMatch((line) -> line.contains("DiscoveryClient_LB-ONLY-CLOSED/lb-only-closed")
						&& line.contains("registration failed")));

		app.close();

		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(eurekaClientThreadsSince(before))
				.as("threads of a Eureka client started by the closed application")
				.isEmpty());
	}

	private static Set<Long> liveThreads() {
		return Thread.getAllStackTraces().keySet().stream().map(Thread::getId).collect(Collectors.toSet());
	}

	private static Set<String> eurekaClientThreadsSince(Set<Long> before) {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.isAlive() && !before.contains(thread.getId())
					&& thread.getName().startsWith("DiscoveryClient-"))
			.map(Thread::getName)
			.collect(Collectors.toSet());
	}

	/** The mistake: one builder, load-balanced. */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class LoadBalancedOnlyApp {

		@Bean
		@LoadBalanced
		RestClient.Builder loadBalancedRestClientBuilder() {
			return RestClient.builder();
		}

	}

}
