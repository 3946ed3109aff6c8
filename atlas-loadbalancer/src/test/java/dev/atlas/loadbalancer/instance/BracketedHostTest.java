package dev.atlas.loadbalancer.instance;

import java.net.URI;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.EmptyResponse;
import org.springframework.cloud.client.loadbalancer.LoadBalancerUriTools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class BracketedHostTest {

	private static final URI ENCODED = URI.create("http://user-service/users/%31?name=%E6%B5%8B%E8%AF%95");

	@Test
	void anUnbracketedIpv6HostGetsBracketsForTheUriAndNothingElseChanges() {
		ServiceInstance listed = instance("fe80::1");
		assertThatIllegalArgumentException().as("Spring Cloud's URI rebuilding with the listed host")
			.isThrownBy(() -> LoadBalancerUriTools.reconstructURI(listed, ENCODED))
			.withMessageContaining("HOST_IPV4");

		ServiceInstance forUri = BracketedHost.forUri(listed);
		assertThat(forUri.getHost()).isEqualTo("[fe80::1]");
		assertThat(forUri.getPort()).isEqualTo(8080);
		assertThat(forUri.getInstanceId()).isEqualTo("u1");
		assertThat(forUri.getMetadata()).isSameAs(listed.getMetadata());
		assertThat(LoadBalancerUriTools.reconstructURI(forUri, ENCODED))
			.hasToString("http://[fe80::1]:8080/users/%31?name=%E6%B5%8B%E8%AF%95");
		assertThat(BracketedHost.original(forUri)).isSameAs(listed);
		assertThat(BracketedHost.chosen(new DefaultResponse(forUri))).isSameAs(listed);
		assertThat(BracketedHost.forUri(forUri)).as("no view of a view").isSameAs(forUri);
		assertThat(BracketedHost.forUri(listed)).as("views of one instance are equal")
			.isEqualTo(forUri)
			.hasSameHashCodeAs(forUri);
	}

	@Test
	void otherHostsAreLeftAsTheyAre() {
		for (String host : new String[] { "10.0.0.1", "user-host.local", "[::1]" }) {
			ServiceInstance listed = instance(host);
			assertThat(BracketedHost.forUri(listed)).isSameAs(listed);
			assertThat(BracketedHost.original(listed)).isSameAs(listed);
			assertThat(BracketedHost.chosen(new DefaultResponse(listed))).isSameAs(listed);
		}
		assertThat(BracketedHost.chosen(null)).isNull();
		assertThat(BracketedHost.chosen(new EmptyResponse())).isNull();
	}

	private static ServiceInstance instance(String host) {
		return new DefaultServiceInstance("u1", "user-service", host, 8080, false, Map.of("version", "v2"));
	}

}
