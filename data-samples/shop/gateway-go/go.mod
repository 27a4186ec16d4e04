module example.com/shop/gateway

go 1.21
