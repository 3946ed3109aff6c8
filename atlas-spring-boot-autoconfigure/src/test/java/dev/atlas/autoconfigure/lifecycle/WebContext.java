package dev.atlas.autoconfigure.lifecycle;

import org.springframework.boot.web.server.WebServer;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.support.GenericApplicationContext;

/**
 * A plain application context that passes for a web application's root context (what the
 * shutdown sequence checks to decide whether an unregistered application drains), without
 * a web server. Not thread-safe while being refreshed.
 */
class WebContext extends GenericApplicationContext implements WebServerApplicationContext {

	@Override
	public WebServer getWebServer() {
		throw new UnsupportedOperationException("no web server in this test");
	}

	@Override
	public String getServerNamespace() {
		return null;
	}

}
