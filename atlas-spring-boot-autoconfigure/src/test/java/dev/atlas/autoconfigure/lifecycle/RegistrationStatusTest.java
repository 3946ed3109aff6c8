package dev.atlas.autoconfigure.lifecycle;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

@ExtendWith(OutputCaptureExtension.class)
class RegistrationStatusTest {

	private static final ServiceInstance SELF = new DefaultServiceInstance("a", "app", "10.0.0.1", 8080, false);

	private final AtomicReference<@Nullable Object> answer = new AtomicReference<>(List.of());

	private final AtomicInteger lookups = new AtomicInteger();

	private final Set<String> lookedUp = ConcurrentHashMap.newKeySet();

	private final Clock clock = Clock.fixed(Instant.ofEpochMilli(1_000), ZoneOffset.UTC);

	@SuppressWarnings("unchecked")
	private final RegistrationStatus status = new RegistrationStatus((serviceId) -> {
		this.lookups.incrementAndGet();
		this.lookedUp.add(serviceId);
		Object value = this.answer.get();
		if (value instanceof RuntimeException ex) {
			throw ex;
		}
		return (List<ServiceInstance>) value;
	}, this.clock, Duration.ofMillis(10));

	@AfterEach
	void stop() {
		this.status.destroy();
	}

	@Test
	void notRegisteredUntilTheRegistryAcceptsARegistration() {
		assertThat(this.status.phase()).isEqualTo(RegistrationStatus.Phase.NOT_REGISTERED);
		assertThat(this.status.listedAt()).isEqualTo(-1);
	}

	@Test
	void pendingUntilTheRegistryListsThisInstanceEvenWhileTheRegistryIsDown() {
		this.status.registered(SELF);
		this.answer.set(new IllegalStateException("registry down"));
		await().during(Duration.ofMillis(200))
			.atMost(Duration.ofSeconds(1))
			.until(() -> this.status.phase() == RegistrationStatus.Phase.PENDING);
		// Another instance of the service, and this host on another port, are not this
		// one.
		this.answer.set(List.of(new DefaultServiceInstance("b", "app", "10.0.0.2", 8080, false),
				new DefaultServiceInstance("c", "app", "10.0.0.1", 8081, false)));
		await().during(Duration.ofMillis(200))
			.atMost(Duration.ofSeconds(1))
			.until(() -> this.status.phase() == RegistrationStatus.Phase.PENDING);
		this.answer.set(List.of(new DefaultServiceInstance("other-id", "app", "10.0.0.1", 8080, false)));
		await().atMost(Duration.ofSeconds(2)).until(() -> this.status.phase() == RegistrationStatus.Phase.LISTED);
		assertThat(this.status.listedAt()).isEqualTo(1_000);
	}

	@Test
	void deregisteringStopsTheChecks() {
		this.status.registered(SELF);
		await().atMost(Duration.ofSeconds(1)).until(() -> this.lookups.get() >= 2);
		this.status.deregistered(SELF);
		int lookupsAtDeregistration = this.lookups.get();
		this.answer.set(List.of(SELF));
		await().during(Duration.ofMillis(300))
			.atMost(Duration.ofSeconds(1))
			.until(() -> this.status.phase() == RegistrationStatus.Phase.DEREGISTERED
					&& this.lookups.get() <= lookupsAtDeregistration + 1);
	}

	/**
	 * Spring Cloud registers a separate management service for some registries (Consul):
	 * it is not this application's registration.
	 */
	@Test
	void aManagementServiceRegisteredAfterTheApplicationIsNotFollowed() {
		this.answer.set(List.of(SELF));
		this.status.registered(SELF);
		await().atMost(Duration.ofSeconds(2)).until(() -> this.status.phase() == RegistrationStatus.Phase.LISTED);
		this.status.registered(new DefaultServiceInstance("m", "app-management", "10.0.0.1", 9090, false));
		this.status.deregistered(new DefaultServiceInstance("m", "app-management", "10.0.0.1", 9090, false));
		assertThat(this.status.phase()).isEqualTo(RegistrationStatus.Phase.LISTED);
		assertThat(this.lookedUp).containsExactly("app");
	}

	/** One WARN when the registry still does not list the instance after 60 s. */
	@Test
	void stillPendingAfterAMinuteWarnsOnce(CapturedOutput output) {
		AtomicLong now = new AtomicLong(0);
		Clock moving = new Clock() {

			@Override
			public ZoneId getZone() {
				return ZoneOffset.UTC;
			}

			@Override
			public Clock withZone(ZoneId zone) {
				return this;
			}

			@Override
			public Instant instant() {
				return Instant.ofEpochMilli(now.get());
			}

		};
		AtomicInteger checks = new AtomicInteger();
		RegistrationStatus pending = new RegistrationStatus((serviceId) -> {
			checks.incrementAndGet();
			return List.of();
		}, moving, Duration.ofMillis(10));
		try {
			pending.registered(SELF);
			await().atMost(Duration.ofSeconds(1)).until(() -> checks.get() >= 3);
			assertThat(output.getOut()).doesNotContain("does not list this instance");
			now.set(61_000);
			int atMinute = checks.get();
			await().atMost(Duration.ofSeconds(1)).until(() -> checks.get() >= atMinute + 5);
			assertThat(output.getOut()
				.lines()
				.filter((line) -> line.contains("does not list this instance (10.0.0.1:8080)"))).hasSize(1);
			assertThat(pending.phase()).isEqualTo(RegistrationStatus.Phase.PENDING);
		}
		finally {
			pending.destroy();
		}
	}

	@Test
	void aRegistrationAfterDestroyStartsNoCheck() {
		this.status.destroy();
		this.status.registered(SELF);
		assertThat(this.status.phase()).isEqualTo(RegistrationStatus.Phase.NOT_REGISTERED);
		assertThat(this.lookups).hasValue(0);
	}

	@Test
	void withoutADiscoveryClientToAskAnAcceptedRegistrationCountsAsListed() {
		this.answer.set(null);
		this.status.registered(SELF);
		await().atMost(Duration.ofSeconds(2)).until(() -> this.status.phase() == RegistrationStatus.Phase.LISTED);
	}

}
