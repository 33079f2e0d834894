"""Records to Redis: the background producer, the disk spool when Redis is down, queue admin."""
