module example.com/shop/gateway

go 1.21

require example.com/shop/core v0.1.0
