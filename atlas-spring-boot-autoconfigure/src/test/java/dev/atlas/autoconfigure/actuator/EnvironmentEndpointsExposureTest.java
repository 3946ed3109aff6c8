package dev.atlas.autoconfigure.actuator;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which of Spring Cloud's endpoints that change the Environment (and so Atlas's rules)
 * are exposed over HTTP: the startup WARN names them when they share the application's
 * port.
 */
class EnvironmentEndpointsExposureTest {

	private static List<String> exposed(String... properties) {
		MockEnvironment environment = new MockEnvironment();
		for (String property : properties) {
			String[] pair = property.split("=", 2);
			environment.setProperty(pair[0], pair[1]);
		}
		return AtlasActuatorAutoConfiguration.EnvironmentEndpointsExposureConfiguration
			.exposedEnvironmentEndpoints(environment);
	}

	@Test
	void onlyExposedEndpointsThatChangeTheEnvironmentCount() {
		assertThat(exposed()).as("Spring Boot's default exposure: health").isEmpty();
		assertThat(exposed("management.endpoints.web.exposure.include=health,refresh,atlas"))
			.containsExactly("refresh");
		assertThat(exposed("management.endpoints.web.exposure.include=*"))
			.as("env only when its POST is on; the bus endpoints only with Spring Cloud Bus")
			.containsExactly("refresh");
		assertThat(exposed("management.endpoints.web.exposure.include=*",
				"management.endpoints.web.exposure.exclude=refresh"))
			.isEmpty();
		assertThat(exposed("management.endpoints.web.exposure.include=refresh",
				"management.endpoints.web.exposure.exclude=*"))
			.isEmpty();
		assertThat(exposed("management.endpoints.web.exposure.include=refresh",
				"management.endpoint.refresh.access=read-only"))
			.as("a POST needs unrestricted access")
			.isEmpty();
		assertThat(exposed("management.endpoints.web.exposure.include=refresh",
				"management.endpoints.access.default=none"))
			.isEmpty();
		assertThat(
				exposed("management.endpoints.web.exposure.include=env", "management.endpoint.env.post.enabled=true"))
			.containsExactly("env");
	}

}
