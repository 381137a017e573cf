"""Development helpers: an embedded Kafka broker, Maven jar resolution, producing sample data."""
