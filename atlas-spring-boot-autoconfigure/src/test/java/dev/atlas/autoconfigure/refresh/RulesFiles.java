package dev.atlas.autoconfigure.refresh;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/** The configuration files the refresh tests import and rewrite before each refresh. */
final class RulesFiles {

	private RulesFiles() {
	}

	/**
	 * Replaces a file's content with properties, one {@code key=value} line each.
	 * @param file the file
	 * @param properties the properties, in the map's order
	 * @throws IOException when the file cannot be written
	 */
	static void write(Path file, Map<String, String> properties) throws IOException {
		StringBuilder text = new StringBuilder();
		properties.forEach((key, value) -> text.append(key).append('=').append(value).append('\n'));
		Files.writeString(file, text);
	}

}
