package dev.atlas.sample.eureka;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.netflix.eureka.server.EnableEurekaServer;

/**
 * A single Eureka server for the samples' {@code eureka} profile:
 * {@code java -jar sample-eureka-server-*-exec.jar --server.port=8761}. Standalone (it
 * neither registers nor replicates) and tuned for fast propagation as Spring Cloud
 * Netflix's documentation describes (see {@code application.yml}). Not for production.
 */
@SpringBootApplication
@EnableEurekaServer
public class EurekaServerApplication {

	/**
	 * Starts the server.
	 * @param args the Spring Boot arguments, e.g. {@code --server.port=8761}
	 */
	public static void main(String[] args) {
		SpringApplication.run(EurekaServerApplication.class, args);
	}

}
