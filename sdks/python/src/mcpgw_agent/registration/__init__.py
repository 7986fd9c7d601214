"""Being known to the gateway: registration of the catalogue, presence of the pod."""
