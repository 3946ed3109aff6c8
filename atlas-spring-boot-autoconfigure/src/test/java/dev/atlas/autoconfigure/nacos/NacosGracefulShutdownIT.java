package dev.atlas.autoconfigure.nacos;

import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.alibaba.cloud.nacos.NacosServiceManager;
import com.alibaba.nacos.api.naming.NamingService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Graceful shutdown on a real Nacos server: while an application drains, its own
 * load-balanced calls (a second hop, a scheduled job) still follow the registry — they
 * stop choosing the stopping instance itself and an instance disabled meanwhile within 1
 * s — and its Nacos client shuts down only after the drain and the web server. Spring
 * Cloud's deregistration closes the service registry, and Spring Cloud Alibaba's
 * {@code close()} shuts the shared naming service down; before Atlas held that close
 * back, the stopping application routed on a frozen list for the whole drain.
 */
@EnabledIfEnvironmentVariable(named = NacosApps.ADDRESS_VARIABLE, matches = ".+", disabledReason = NacosApps.SKIPPED)
@ExtendWith(OutputCaptureExtension.class)
class NacosGracefulShutdownIT {

	private NacosApps nacos;

	@BeforeEach
	void nacos() {
		this.nacos = new NacosApps();
	}

	@AfterEach
	void stop() {
		this.nacos.close();
	}

	@Test
	void aDrainingApplicationsOwnCallsFollowTheRegistryAndItsNacosClientClosesLast(CapturedOutput output)
			throws Exception {
		String service = NacosApps.service("draining");
		String[] common = { "app.target=" + service, "atlas.loadbalancer.strategy=smooth-round-robin",
				"atlas.warmup.enabled=false" };
		ConfigurableApplicationContext stopping = this.nacos.start(service, concat(common, "atlas.lifecycle.drain=6s"));
		ConfigurableApplicationContext other = this.nacos.start(service, common);
		ConfigurableApplicationContext disabled = this.nacos.start(service, common);
		int stoppingPort = NacosApps.port(stopping);
		int otherPort = NacosApps.port(other);
		int disabledPort = NacosApps.port(disabled);
		NacosApps.awaitInstances(stopping, service, 3);
		// Smooth round robin over three: every third call reaches the calling instance.
		assertThat(NacosApps.calls(stopping, 30)).containsOnlyKeys(stoppingPort, otherPort, disabledPort);
		NamingService naming = stopping.getBean(NacosServiceManager.class).getNamingService();

		CompletableFuture<Void> shutdown = CompletableFuture.runAsync(stopping::close);
		await().atMost(Duration.ofSeconds(2)).until(() -> !this.nacos.listedPorts(service).contains(stoppingPort));
		long deregistered = System.nanoTime();
		await().atMost(Duration.ofSeconds(1)).until(() -> !NacosApps.calls(stopping, 12).containsKey(stoppingPort));
		long selfGone = System.nanoTime();

		this.nacos.updateInstance(service, disabledPort, 1.0, false, Map.of());
		long disabledAt = System.nanoTime();
		await().atMost(Duration.ofSeconds(1))
			.until(() -> NacosApps.calls(stopping, 12).keySet().equals(Set.of(otherPort)));
		long disabledGone = System.nanoTime();
		assertThat(shutdown).as("still draining").isNotDone();
		assertThat(naming.getServerStatus()).as("Nacos client during the drain").isEqualTo("UP");
		System.out.printf(
				"[nacos] during the drain: own instance left the stopping app's calls %d ms after the "
						+ "server stopped listing it; a disabled instance %d ms after the admin call%n",
				TimeUnit.NANOSECONDS.toMillis(selfGone - deregistered),
				TimeUnit.NANOSECONDS.toMillis(disabledGone - disabledAt));

		shutdown.get(30, TimeUnit.SECONDS);
		assertThat(naming.getServerStatus()).as("Nacos client after shutdown").isEqualTo("DOWN");
		String log = output.getOut();
		int drainOver = log.indexOf("Shutdown: drain over");
		int clientClosed = log.indexOf("Shutdown: web server stopped; closing the registry client");
		assertThat(drainOver).as("drain over, logged").isNotNegative();
		assertThat(clientClosed).as("registry client closed after the drain").isGreaterThan(drainOver);
	}

	private static String[] concat(String[] first, String... more) {
		String[] all = Arrays.copyOf(first, first.length + more.length);
		System.arraycopy(more, 0, all, first.length, more.length);
		return all;
	}

}
