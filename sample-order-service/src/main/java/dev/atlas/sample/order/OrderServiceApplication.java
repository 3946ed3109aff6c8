package dev.atlas.sample.order;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.openfeign.EnableFeignClients;
import org.springframework.scheduling.annotation.EnableAsync;

/**
 * The sample caller: reaches {@code user-service} through a load-balanced RestTemplate,
 * RestClient, WebClient and an OpenFeign client, and through Feign from an {@code @Async}
 * method ({@code GET /chain/{id}}). Its code is plain Spring Cloud; Atlas does the
 * choosing and carries the gray header because {@code atlas-spring-boot-starter} is on
 * the classpath.
 *
 * <p>
 * Its configuration lives in {@code order-service.yml} (not {@code application.yml}) so
 * that it can run in the same JVM as other samples; start it through
 * {@link #application()}.
 */
@SpringBootApplication
@EnableFeignClients
@EnableAsync
public class OrderServiceApplication {

	/** The name of this sample's configuration files ({@code order-service.yml}, …). */
	public static final String CONFIG_NAME = "order-service";

	/**
	 * A builder for this application with its configuration name set as a default.
	 * @return a new application builder
	 */
	public static SpringApplicationBuilder application() {
		return new SpringApplicationBuilder(OrderServiceApplication.class)
			.properties("spring.config.name=" + CONFIG_NAME);
	}

	/**
	 * Runs the application.
	 * @param args command-line arguments, e.g. {@code --server.port=8080}
	 */
	public static void main(String[] args) {
		application().run(args);
	}

}
