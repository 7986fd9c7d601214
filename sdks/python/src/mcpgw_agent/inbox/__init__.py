"""The inbox: the durable consumer and each delivery (consumer), the bounded memory of ids (recently_seen)."""
