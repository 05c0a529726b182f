"""Event buses: in-memory (embedded mode) and Kafka (distributed mode) behind one Protocol."""

from skillgym_core.bus.base import Bus, Delivery, Subscription
from skillgym_core.bus.factory import make_bus

__all__ = ["Bus", "Delivery", "Subscription", "make_bus"]
