package dev.atlas.autoconfigure.client;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.LoadBalancerClientsProperties;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.ResponseData;
import org.springframework.cloud.loadbalancer.stats.MicrometerStatsLoadBalancerLifecycle;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.util.LinkedMultiValueMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * Spring Cloud LoadBalancer's {@code loadbalancer.requests.*} meters as Atlas registers
 * them: their number follows the instances in use and the routes, never the requests'
 * paths or the instances that came and went.
 */
class LoadBalancerRequestMetersTest {

	private final MeterRegistry meters = new SimpleMeterRegistry();

	private final AtomicLong now = new AtomicLong();

	private final LoadBalancerClientFactory factory = new LoadBalancerClientFactory(
			new LoadBalancerClientsProperties());

	private final LoadBalancerRequestMeters lifecycle = new LoadBalancerRequestMeters(this.meters, this.factory,
			this.now::get, Duration.ofMinutes(5));

	/**
	 * 100 instances churned through a service of 5 (twenty rolling deployments, one a
	 * minute): the series of the departed go 5 to 10 min after their last request.
	 */
	@Test
	void theSeriesOfInstancesThatLeftAreRemovedAfterTheIdleWindow() {
		int maxGauges = 0;
		ServiceInstance[] live = new ServiceInstance[5];
		for (int deployment = 0; deployment < 20; deployment++) {
			for (int i = 0; i < live.length; i++) {
				live[i] = instance("g" + deployment + "-" + i);
			}
			for (int second = 0; second < 60; second += 5) {
				this.now.addAndGet(Duration.ofSeconds(5).toNanos());
				for (ServiceInstance instance : live) {
					call(instance, "/users/" + second, null, HttpStatus.OK);
				}
				maxGauges = Math.max(maxGauges, gauges());
			}
		}
		assertThat(maxGauges).as("live plus up to two windows of departed instances").isLessThanOrEqualTo(5 + 5 * 10);
		for (int second = 0; second < 600; second += 5) {
			this.now.addAndGet(Duration.ofSeconds(5).toNanos());
			for (ServiceInstance instance : live) {
				call(instance, "/users/1", null, HttpStatus.OK);
			}
		}
		assertThat(gauges()).isEqualTo(5);
		assertThat(this.lifecycle.trackedInstances()).isEqualTo(5);
		assertThat(this.meters.find("loadbalancer.requests.success").timers()).hasSize(5);
		assertThat(this.meters.get("loadbalancer.requests.success")
			.tag("serviceInstance.instanceId", "g19-0")
			.timer()
			.count()).isEqualTo(12 + 120);
	}

	@Test
	void anInstanceWithARequestInFlightKeepsItsGauge() {
		ServiceInstance slow = instance("slow");
		Call call = Call.start(this.lifecycle, slow, "/users/1", null);
		for (int minute = 0; minute < 20; minute++) {
			this.now.addAndGet(Duration.ofMinutes(1).toNanos());
			call(instance("other"), "/users/1", null, HttpStatus.OK);
		}
		assertThat(this.meters.get("loadbalancer.requests.active")
			.tag("serviceInstance.instanceId", "slow")
			.gauge()
			.value()).isEqualTo(1.0);
		call.complete(this.lifecycle, HttpStatus.OK);
		assertThat(this.meters.get("loadbalancer.requests.active")
			.tag("serviceInstance.instanceId", "slow")
			.gauge()
			.value()).isZero();
	}

	/**
	 * Feign, RestTemplate and the gateway hand Spring Cloud the request's path only:
	 * 2,000 user ids made 2,000 timers. RestClient and WebClient hand it the URI template
	 * too.
	 */
	@Test
	void theUriTagIsTheTemplateWhereTheClientGivesOneAndNeverTheRawPath() {
		ServiceInstance instance = instance("u1");
		MeterRegistry springs = new SimpleMeterRegistry();
		MicrometerStatsLoadBalancerLifecycle spring = new MicrometerStatsLoadBalancerLifecycle(springs, this.factory);
		for (int id = 0; id < 2_000; id++) {
			call(instance, "/users/" + id, null, HttpStatus.OK);
			call(instance, "/users/" + id, "/users/{id}", HttpStatus.OK);
			// a URI built by concatenation reaches Spring Cloud as a "template" too
			call(instance, "/users/" + id, "/users/" + id, HttpStatus.OK);
			Call.start(spring, instance, "/users/" + id, null).complete(spring, HttpStatus.OK);
		}
		assertThat(springs.find("loadbalancer.requests.success").timers()).as("Spring Cloud's").hasSize(2_000);
		assertThat(this.meters.find("loadbalancer.requests.success").timers())
			.extracting((timer) -> timer.getId().getTag("uri"))
			.containsExactlyInAnyOrder("UNKNOWN", "/users/{id}");
	}

	@Test
	void theMetersKeepSpringCloudsNamesTagsAndValues() {
		MeterRegistry springs = new SimpleMeterRegistry();
		MicrometerStatsLoadBalancerLifecycle spring = new MicrometerStatsLoadBalancerLifecycle(springs, this.factory);
		ServiceInstance instance = instance("u1");
		for (MicrometerStatsLoadBalancerLifecycle each : new MicrometerStatsLoadBalancerLifecycle[] { spring,
				this.lifecycle }) {
			Call ok = Call.start(each, instance, "/users/1", "/users/{id}");
			Call inFlight = Call.start(each, instance, "/users/2", "/users/{id}");
			ok.complete(each, HttpStatus.OK);
			Call.start(each, instance, "/users/3", "/users/{id}").complete(each, HttpStatus.SERVICE_UNAVAILABLE);
			Call.start(each, instance, "/users/3", "/users/{id}").fail(each, new IllegalStateException("down"));
			assertThat(inFlight).isNotNull();
		}
		assertThat(describe(this.meters)).isEqualTo(describe(springs));
	}

	@Test
	void noCallbackThrowsOnAnErrorPath() {
		MicrometerStatsLoadBalancerLifecycle spring = new MicrometerStatsLoadBalancerLifecycle(
				new SimpleMeterRegistry(), this.factory);
		CompletionContext<Object, ServiceInstance, Object> failedWithoutInstance = new CompletionContext<>(
				CompletionContext.Status.FAILED, new IllegalArgumentException("Invalid character ':' for HOST_IPV4"),
				new DefaultRequest<>(new RequestDataContext()), null);
		assertThat(catchThrowable(() -> spring.onComplete(failedWithoutInstance)))
			.as("Spring Cloud's, which Atlas replaces")
			.isInstanceOf(NullPointerException.class);
		assertThatNoException().isThrownBy(() -> {
			this.lifecycle.onStartRequest(null, null);
			this.lifecycle.onComplete(failedWithoutInstance);
			this.lifecycle.onComplete(new CompletionContext<>(CompletionContext.Status.FAILED, (Throwable) null, null,
					new DefaultResponse(instance("u1"))));
			this.lifecycle
				.onComplete(new CompletionContext<>(CompletionContext.Status.SUCCESS, (Throwable) null, null, null));
			this.lifecycle
				.onComplete(new CompletionContext<>(CompletionContext.Status.DISCARD, (Throwable) null, null, null));
		});
	}

	private static Throwable catchThrowable(Runnable action) {
		try {
			action.run();
			return null;
		}
		catch (RuntimeException ex) {
			return ex;
		}
	}

	private static String describe(MeterRegistry registry) {
		StringBuilder description = new StringBuilder();
		registry.getMeters()
			.stream()
			.map((meter) -> meter.getId().getName() + meter.getId().getTags() + " "
					+ registry.get(meter.getId().getName()).tags(meter.getId().getTags()).meter().measure())
			.map((line) -> line.replaceAll("(TOTAL_TIME|MAX)', value=[0-9.E-]+", "$1'"))
			.sorted()
			.forEach((line) -> description.append(line).append('\n'));
		return description.toString();
	}

	private void call(ServiceInstance instance, String path, String template, HttpStatus status) {
		Call.start(this.lifecycle, instance, path, template).complete(this.lifecycle, status);
	}

	private int gauges() {
		return this.meters.find("loadbalancer.requests.active").gauges().size();
	}

	private static ServiceInstance instance(String id) {
		return new DefaultServiceInstance(id, "user-service", "10.0.0.1", 8080, false, Map.of());
	}

	/** One load-balanced call, reported as Spring Cloud's blocking clients do. */
	private record Call(Request<Object> request, Response<ServiceInstance> response, RequestData data) {

		@SuppressWarnings({ "unchecked", "rawtypes" })
		static Call start(MicrometerStatsLoadBalancerLifecycle lifecycle, ServiceInstance instance, String path,
				String template) {
			Map<String, Object> attributes = (template != null)
					? Map.of("org.springframework.web.client.RestClient.uriTemplate", template) : Map.of();
			RequestData data = new RequestData(HttpMethod.GET, URI.create("http://user-service" + path),
					new HttpHeaders(), new LinkedMultiValueMap<>(), attributes);
			Call call = new Call((Request) new DefaultRequest<>(new RequestDataContext(data)),
					new DefaultResponse(instance), data);
			lifecycle.onStartRequest(call.request, call.response);
			return call;
		}

		void complete(MicrometerStatsLoadBalancerLifecycle lifecycle, HttpStatus status) {
			lifecycle.onComplete(new CompletionContext<>(CompletionContext.Status.SUCCESS, this.request, this.response,
					new ResponseData(status, new HttpHeaders(), new LinkedMultiValueMap<>(), this.data)));
		}

		void fail(MicrometerStatsLoadBalancerLifecycle lifecycle, Throwable failure) {
			lifecycle.onComplete(
					new CompletionContext<>(CompletionContext.Status.FAILED, failure, this.request, this.response));
		}

	}

}
