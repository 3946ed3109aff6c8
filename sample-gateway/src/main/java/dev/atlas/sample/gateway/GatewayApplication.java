package dev.atlas.sample.gateway;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;

/**
 * The sample gateway: Spring Cloud Gateway (server, WebFlux) routing
 * {@code /api/users/**} to {@code lb://user-service} and {@code /api/orders/**} to
 * {@code lb://order-service}. Its routes are plain Spring Cloud Gateway configuration;
 * Atlas chooses the instances because {@code atlas-spring-boot-starter} is on the
 * classpath (the gateway balances through the same {@code ReactorLoadBalancer} SPI as the
 * load-balanced clients).
 *
 * <p>
 * Its configuration lives in {@code gateway.yml} (not {@code application.yml}) so that it
 * can run in the same JVM as other samples; start it through {@link #application()}.
 */
@SpringBootApplication
public class GatewayApplication {

	/** The name of this sample's configuration files ({@code gateway.yml}, …). */
	public static final String CONFIG_NAME = "gateway";

	/**
	 * A builder for this application with its configuration name set as a default, and
	 * Nacos discovery off unless the {@code nacos} profile turns it on
	 * ({@code gateway-nacos.yml}).
	 * @return a new application builder
	 */
	public static SpringApplicationBuilder application() {
		return new SpringApplicationBuilder(GatewayApplication.class).properties("spring.config.name=" + CONFIG_NAME,
				"spring.cloud.nacos.discovery.enabled=false");
	}

	/**
	 * Runs the application.
	 * @param args command-line arguments, e.g. {@code --server.port=8000}
	 */
	public static void main(String[] args) {
		application().run(args);
	}

}
